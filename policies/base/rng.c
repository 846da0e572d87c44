/* rng.c: xoshiro256** streams keyed by (seed, entity, purpose).
 *
 * Key derivation: h = mix(seed ^ K0); h = mix(h ^ entity); h = mix(h ^ purpose),
 * where mix is the splitmix64 output function of (x + golden gamma). The four
 * state words are then the next four splitmix64 outputs from h. Every stream is
 * a pure function of its key, which is what makes streams independent of the
 * order entities are created in. Rejected: one global generator advanced in
 * creation order (adding a device reshuffles everyone), and jump-ahead
 * partitioning (needs a global entity count up front). */
#include "hs_rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define GOLDEN 0x9e3779b97f4a7c15ULL

static uint64_t mix64(uint64_t z) {
  z += GOLDEN;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t hs_splitmix64(uint64_t *x) {
  uint64_t z = (*x += GOLDEN);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void hs_rng_init(hs_rng *r, uint64_t seed, uint64_t entity, uint64_t purpose) {
  uint64_t h = mix64(seed ^ 0x68657473696d2121ULL); /* "hetsim!!" */
  h = mix64(h ^ entity);
  h = mix64(h ^ purpose);
  for (int i = 0; i < 4; i++) r->s[i] = hs_splitmix64(&h);
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

/* --- GSL adapter ---------------------------------------------------------- */

typedef struct gsl_state {
  hs_rng *src; /* the stream draws come from */
  hs_rng own;  /* used after gsl_rng_set() */
} gsl_state;

static void gsl_set(void *vstate, unsigned long seed) {
  gsl_state *st = vstate;
  hs_rng_init(&st->own, seed, 0, 0);
  st->src = &st->own;
}

static unsigned long gsl_get(void *vstate) {
  gsl_state *st = vstate;
  return (unsigned long)(hs_rng_next(st->src) >> 32);
}

static double gsl_get_double(void *vstate) {
  gsl_state *st = vstate;
  return hs_rng_uniform(st->src);
}

static const gsl_rng_type adapter_type = {
    "hetsim-xoshiro256**", 0xffffffffUL, 0, sizeof(gsl_state), gsl_set, gsl_get, gsl_get_double};

const gsl_rng_type *hs_rng_gsl_type = &adapter_type;

gsl_rng *hs_rng_gsl_create(hs_rng *r) {
  gsl_rng *g = gsl_rng_alloc(hs_rng_gsl_type);
  if (!g) {
    fputs("hetsim: out of memory in gsl_rng_alloc\n", stderr);
    abort();
  }
  ((gsl_state *)g->state)->src = r;
  return g;
}

void hs_rng_gsl_destroy(gsl_rng *g) { gsl_rng_free(g); }

void hs_rng_gsl_retarget(gsl_rng *g, hs_rng *r) { ((gsl_state *)g->state)->src = r; }
