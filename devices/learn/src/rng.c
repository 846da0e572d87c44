/* rng.c: the learner's random streams, libc + libm only. The generator core
 * (splitmix64 finaliser, xoshiro256**) is hs_rng.h's header-only part, shared
 * with the simulator and AGC; only the four-level keying is the learner's.
 *
 * A stream is xoshiro256** whose state is four splitmix64 outputs from a key
 * h = f(f(f(f(seed) ^ entity) ^ purpose) ^ draw), f the splitmix64 finaliser
 * with an odd offset per step. Every stream is a pure function of (seed,
 * entity, purpose, draw): participants get the same samples whatever order
 * they are served in and whatever thread serves them.
 * Gamma variates: Marsaglia and Tsang's squeeze (2000) for shape >= 1, the
 * shape+1 boost for shape < 1, returned as logarithms. Rejected: GSL (not on
 * the boards), one global generator (order-dependent). */
#include "learn_internal.h"

#include <math.h>

#include "base/hs_rng.h"

static uint64_t rng_fin(uint64_t z) { return hs_mix64(z); }

void lrn_rng_key(lrn_rng *r, uint64_t seed, uint64_t entity, uint64_t purpose, uint64_t draw) {
  const uint64_t g = 0x9e3779b97f4a7c15ull;
  uint64_t h = rng_fin(seed + g);
  h = rng_fin((h ^ entity) + 2 * g);
  h = rng_fin((h ^ purpose) + 3 * g);
  h = rng_fin((h ^ draw) + 4 * g);
  for (int i = 0; i < 4; i++) r->s[i] = hs_splitmix64_step(&h);
  if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3])) r->s[0] = 1; /* the one forbidden state */
}

uint64_t lrn_rng_next(lrn_rng *r) { return hs_xoshiro256ss(r->s); }

double lrn_rng_u01(lrn_rng *r) { return hs_u53(lrn_rng_next(r)); }

size_t lrn_rng_below(lrn_rng *r, size_t n) {
  /* Rejection on the top bits: exact uniformity (n < 2^32 here). */
  uint64_t lim = UINT64_MAX - UINT64_MAX % (uint64_t)n, x;
  do x = lrn_rng_next(r);
  while (x >= lim);
  return (size_t)(x % (uint64_t)n);
}

double lrn_rng_normal(lrn_rng *r) {
  double u = ((double)(lrn_rng_next(r) >> 11) + 0.5) * 0x1p-53, v = lrn_rng_u01(r);
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

double lrn_rng_log_gamma(lrn_rng *r, double shape) {
  double boost = 0;
  if (shape < 1) {
    double u = ((double)(lrn_rng_next(r) >> 11) + 0.5) * 0x1p-53;
    boost = log(u) / shape;
    shape += 1;
  }
  double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x = lrn_rng_normal(r), v = 1 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    double u = ((double)(lrn_rng_next(r) >> 11) + 0.5) * 0x1p-53;
    if (log(u) < 0.5 * x * x + d - d * v + d * log(v)) return log(d * v) + boost;
  }
}

void lrn_shuffle_u32(lrn_rng *r, uint32_t *a, size_t n) {
  for (size_t i = n; i > 1; i--) {
    size_t j = lrn_rng_below(r, i);
    uint32_t t = a[i - 1];
    a[i - 1] = a[j];
    a[j] = t;
  }
}
