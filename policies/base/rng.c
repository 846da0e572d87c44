/* rng.c: xoshiro256** streams keyed by (seed, entity, purpose).
 *
 * Key derivation: h = mix(seed ^ K0); h = mix(h ^ entity); h = mix(h ^ purpose),
 * where mix is the splitmix64 output function of (x + golden gamma). The four
 * state words are then the next four splitmix64 outputs from h. Every stream is
 * a pure function of its key, which is what makes streams independent of the
 * order entities are created in. libc + libm only: the GSL adapter lives in
 * rng_gsl.c (hetsim::rng_gsl), so the controller never links GSL. Rejected: one global generator advanced in
 * creation order (adding a device reshuffles everyone), and jump-ahead
 * partitioning (needs a global entity count up front). */
#include "base/hs_rng.h"

#include <math.h>
#include <stdint.h>

#define GOLDEN 0x9e3779b97f4a7c15ULL

static uint64_t mix64(uint64_t z) { return hs_mix64(z + GOLDEN); }

uint64_t hs_splitmix64(uint64_t *x) { return hs_splitmix64_step(x); }

void hs_rng_init(hs_rng *r, uint64_t seed, uint64_t entity, uint64_t purpose) {
  uint64_t h = mix64(seed ^ 0x68657473696d2121ULL); /* "hetsim!!" */
  h = mix64(h ^ entity);
  h = mix64(h ^ purpose);
  for (int i = 0; i < 4; i++) r->s[i] = hs_splitmix64_step(&h);
  if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0) r->s[0] = GOLDEN;
}

uint64_t hs_rng_below(hs_rng *r, uint64_t n) {
  /* Rejection on the top of the range: unbiased, and rarely loops. */
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = hs_rng_next(r);
  while (x >= limit);
  return x % n;
}

double hs_rng_exponential(hs_rng *r, double mean) { return -mean * log(hs_rng_uniform_pos(r)); }
