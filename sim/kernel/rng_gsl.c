/* rng_gsl.c: the GSL adapter of the hs_rng streams (target hetsim::rng_gsl):
 * a gsl_rng_type whose draws come from an hs_rng, so gsl_ran_* distributions
 * run on a seeded per-entity stream.
 *
 * Kept out of rng.c so that the controller library (hetsim::policies, libc +
 * libm, MIT) never links GSL (GPL-3.0-or-later): only the simulator and its
 * tests link this file. The state is one pointer to the source stream plus an
 * own stream used after gsl_rng_set(); every call is O(1). Rejected: a
 * gsl_rng_type per stream (one adapter retargeted serves every entity). */
#include "hs_rng_gsl.h"

#include <stdio.h>
#include <stdlib.h>

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
