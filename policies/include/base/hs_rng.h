/* [policies/include/base -> hetsim::base; installed: include/hetsim/base/, -lhetsim-policies]
 * hs_rng.h: seeded random streams, one per (master seed, entity id, purpose).
 *
 * A stream's draws depend only on those three numbers, never on creation order,
 * so adding a device does not change any other device's draws. The key is mixed
 * with the splitmix64 finaliser and expanded by splitmix64 into the 256-bit state
 * of xoshiro256** (Blackman & Vigna), which is the generator itself.
 *
 * hs_rng is a small open value type: embed it, initialise it with hs_rng_init.
 * libc + libm only. The generator core (hs_mix64, hs_splitmix64_step,
 * hs_xoshiro256ss) is static inline and libc-only, so code that links only
 * hetsim::status (the cross-built learner and probe) and streams keyed
 * differently (AGC's quantiser) share this one copy. GSL's gsl_ran_* distributions draw from a stream through
 * the adapter of hs_rng_gsl.h (policies/base, target hetsim::rng_gsl, not part
 * of the installed controller library). */
#ifndef HS_RNG_H
#define HS_RNG_H

#include <stdint.h>

typedef struct hs_rng {
  uint64_t s[4];
} hs_rng;

/* Well-known purposes; any other 64-bit value is fine too. */
enum {
  HS_RNG_COMPUTE = 1,  /* per-round compute-time noise of a device */
  HS_RNG_TELEMETRY,    /* measurement noise on reported telemetry */
  HS_RNG_POPULATION,   /* drawing per-device spread in large populations */
  HS_RNG_POLICY,       /* randomised policies (oort exploration) */
  HS_RNG_NETWORK,      /* link jitter */
  HS_RNG_BENCH         /* benchmarks and tests */
};

/* The splitmix64 output function of z (its finaliser, without the gamma add). */
static inline uint64_t hs_mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
/* The splitmix64 step, inline: advances *x by the golden gamma, returns its mix. */
static inline uint64_t hs_splitmix64_step(uint64_t *x) { return hs_mix64(*x += 0x9e3779b97f4a7c15ULL); }
/* The same step, as an exported function (part of the installed library's ABI). */
uint64_t hs_splitmix64(uint64_t *x);

void hs_rng_init(hs_rng *r, uint64_t seed, uint64_t entity, uint64_t purpose);
/* The generator itself is inline: it is drawn from once or twice per
 * participant in the controller's hot loops (oort at 10^6 participants). */
static inline uint64_t hs_rng_rotl_(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* One xoshiro256** step on a 256-bit state (not all zero): 64 uniform bits. */
static inline uint64_t hs_xoshiro256ss(uint64_t s[4]) {
  const uint64_t result = hs_rng_rotl_(s[1] * 5, 7) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = hs_rng_rotl_(s[3], 45);
  return result;
}

/* 64 bits to a double in [0, 1), 53-bit resolution. */
static inline double hs_u53(uint64_t bits) { return (double)(bits >> 11) * 0x1.0p-53; }

/* 64 uniform bits (xoshiro256**). */
static inline uint64_t hs_rng_next(hs_rng *r) { return hs_xoshiro256ss(r->s); }

/* [0, 1), 53-bit resolution. */
static inline double hs_rng_uniform(hs_rng *r) { return hs_u53(hs_rng_next(r)); }

/* (0, 1). */
static inline double hs_rng_uniform_pos(hs_rng *r) {
  double u;
  do u = hs_rng_uniform(r);
  while (u == 0.0);
  return u;
}
uint64_t hs_rng_below(hs_rng *r, uint64_t n); /* uniform in [0, n), unbiased; n > 0 */
double hs_rng_exponential(hs_rng *r, double mean);

#endif
