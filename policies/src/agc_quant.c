/* agc_quant.c: the seeded stochastic quantiser of AGC and its exact variance,
 * with the small random stream it draws from.
 *
 * Stream: xoshiro256** (Blackman & Vigna), its 256-bit state filled by
 * splitmix64 from a key mixed out of (seed, stream); the generator core is
 * hs_rng.h's (libc-only, inline), only the keying is AGC's own. A stream is a pure function of its key, so a regime can key one per
 * (seed, iteration, worker) and get the same draws whatever the order.
 *
 * Quantiser (QSGD-style L2 scaling): s = ||x||; z >= 2 bits per coordinate is a
 * sign and one of M + 1 = 2^(z-1) levels; |x_c| M / s is rounded up with
 * probability its fractional part, so E[Q(x)] = x and the variance is the
 * exact sum in hs_agc_quant_variance, at most dim/(4 M^2) s^2 = omega(z) s^2
 * with D = dim/4. z = 1 sends +-s with the unbiased probability. One uniform
 * per coordinate, in coordinate order, even where the level is exact (so the
 * stream position after a message depends only on dim). O(dim). For z > 1024,
 * M is that of z = 1024 (the level grid is finer than a double already). */
#include <math.h>

#include "policies/hs_agc.h"
#include "base/hs_rng.h"

#define GOLDEN 0x9e3779b97f4a7c15ULL

void hs_agc_rng_init(hs_agc_rng *r, uint64_t seed, uint64_t stream) {
  uint64_t h = seed ^ 0x6167632d71756e74ULL; /* "agc-qunt" */
  h = hs_splitmix64_step(&h) ^ stream;
  for (int i = 0; i < 4; i++) r->s[i] = hs_splitmix64_step(&h);
  if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0) r->s[0] = GOLDEN;
}

uint64_t hs_agc_rng_next(hs_agc_rng *r) { return hs_xoshiro256ss(r->s); }

double hs_agc_rng_uniform(hs_agc_rng *r) { return hs_u53(hs_agc_rng_next(r)); }

static double norm2(const double *x, size_t dim) {
  /* scaled, so that huge or tiny coordinates neither overflow nor underflow */
  double amax = 0.0;
  for (size_t c = 0; c < dim; c++)
    if (fabs(x[c]) > amax) amax = fabs(x[c]);
  if (amax == 0.0 || !isfinite(amax)) return amax;
  double acc = 0.0;
  for (size_t c = 0; c < dim; c++) {
    double v = x[c] / amax;
    acc += v * v;
  }
  return amax * sqrt(acc);
}

static double levels(int64_t z) { return ldexp(1.0, (int)(z > 1024 ? 1023 : z - 1)) - 1.0; }

double hs_agc_quantize(const double *x, size_t dim, int64_t z, hs_agc_rng *r, double *out) {
  double s = norm2(x, dim);
  if (s < 1e-8) {
    for (size_t c = 0; c < dim; c++) {
      (void)hs_agc_rng_uniform(r);
      out[c] = 0.0;
    }
    return 0.0;
  }
  if (z <= 1) {
    for (size_t c = 0; c < dim; c++) {
      double u = hs_agc_rng_uniform(r);
      out[c] = u < 0.5 * (x[c] / s + 1.0) ? s : -s;
    }
    return s;
  }
  double M = levels(z);
  for (size_t c = 0; c < dim; c++) {
    double u = hs_agc_rng_uniform(r);
    double y = fabs(x[c]) / s * M, lo = floor(y);
    double j = lo + (u < y - lo ? 1.0 : 0.0);
    if (j > M) j = M;
    out[c] = (x[c] < 0.0 ? -s : s) * (j / M);
  }
  return s;
}

double hs_agc_quant_variance(const double *x, size_t dim, int64_t z) {
  double s = norm2(x, dim);
  if (s < 1e-8) {
    double e = 0.0;
    for (size_t c = 0; c < dim; c++) e += x[c] * x[c];
    return e;
  }
  if (z <= 1) return (double)(dim - 1) * s * s;
  double M = levels(z), v = 0.0, q = s / M;
  for (size_t c = 0; c < dim; c++) {
    double y = fabs(x[c]) / s * M, rr = y - floor(y);
    v += q * q * rr * (1.0 - rr);
  }
  return v;
}
