/* [policies/base -> hetsim::rng_gsl; not installed: links GSL]
 * hs_rng_gsl.h: the GSL adapter of hs_rng streams (policies/base, target
 * hetsim::rng_gsl; build tree only, not installed).
 *
 * Only the simulator links it: the controller library (hetsim::policies) stays
 * libc + libm, so a trainer that links the controller does not link GSL
 * (GPL-3.0-or-later). */
#ifndef HS_RNG_GSL_H
#define HS_RNG_GSL_H

#include <gsl/gsl_rng.h>

#include "base/hs_rng.h"

/* A gsl_rng whose draws come from *r (r must outlive it). gsl_rng_set() on it
 * reseeds an internal stream (seed, 0, 0) instead. Free with hs_rng_gsl_destroy. */
gsl_rng *hs_rng_gsl_create(hs_rng *r);
void hs_rng_gsl_destroy(gsl_rng *g);
/* Point an adapter at another stream (so one adapter serves many entities). */
void hs_rng_gsl_retarget(gsl_rng *g, hs_rng *r);
/* The gsl_rng_type behind the adapter ("hetsim-xoshiro256**"). */
extern const gsl_rng_type *hs_rng_gsl_type;

#endif
