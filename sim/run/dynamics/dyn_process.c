/* dyn_process.c: piecewise-constant processes over simulated time: the
 * two-state Markov-modulated co-tenant slowdown and the on/off availability of
 * a device (a seeded alternating process, or intervals from a trace).
 *
 * Data structure: sorted change times t[] with the value v[] that starts at
 * each; a query is a binary search. A Markov process is extended lazily, one
 * exponential sojourn at a time from its own stream (seed, device, purpose),
 * so its path depends only on the seed and the device, not on which times
 * were asked first. Memory grows with the pieces a run reaches: O(run time /
 * mean sojourn) per device. Rejected: drawing the path up to a fixed horizon
 * at set-up (the run's length is unknown before it runs). */
#include <math.h>
#include <string.h>

#include "dyn.h"
#include "base/hs_alloc.h"

static void push(dyn_pw *p, double t, double v) {
  if (p->n == p->cap) {
    p->cap = p->cap ? 2 * p->cap : 16;
    p->t = hs_realloc(p->t, p->cap * sizeof *p->t);
    p->v = hs_realloc(p->v, p->cap * sizeof *p->v);
  }
  p->t[p->n] = t;
  p->v[p->n] = v;
  p->n++;
}

void dyn_pw_markov(dyn_pw *p, uint64_t seed, uint64_t entity, uint64_t purpose, double val0,
                   double mean0_s, double val1, double mean1_s) {
  memset(p, 0, sizeof *p);
  p->markov = true;
  hs_rng_init(&p->rng, seed, entity, purpose);
  p->mean_s[0] = mean0_s;
  p->mean_s[1] = mean1_s;
  p->val[0] = val0;
  p->val[1] = val1;
  /* Stationary law: state 1 with probability mean1 / (mean0 + mean1). */
  p->cur = hs_rng_uniform(&p->rng) < mean1_s / (mean0_s + mean1_s) ? 1 : 0;
  push(p, 0, p->val[p->cur]);
}

void dyn_pw_intervals(dyn_pw *p, const double *on, size_t n_intervals) {
  memset(p, 0, sizeof *p);
  if (n_intervals == 0 || on[0] > 0) push(p, 0, 0);
  for (size_t j = 0; j < n_intervals; j++) {
    if (p->n >= 2 && p->t[p->n - 1] == on[2 * j] && p->v[p->n - 2] == 1) p->n--; /* touching */
    else if (p->n && p->t[p->n - 1] == on[2 * j]) p->v[p->n - 1] = 1;
    else push(p, on[2 * j], 1);
    push(p, on[2 * j + 1], 0);
  }
}

void dyn_pw_fini(dyn_pw *p) {
  hs_free(p->t);
  hs_free(p->v);
  memset(p, 0, sizeof *p);
}

/* A Markov path reaches strictly past t. */
static void extend(dyn_pw *p, double t) {
  while (p->markov && p->t[p->n - 1] <= t) {
    double next = p->t[p->n - 1] + hs_rng_exponential(&p->rng, p->mean_s[p->cur]);
    p->cur ^= 1;
    push(p, next, p->val[p->cur]);
  }
}

/* Index of the piece holding t (t >= 0). */
static size_t piece(dyn_pw *p, double t) {
  extend(p, t);
  size_t lo = 0, hi = p->n;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (p->t[mid] <= t) lo = mid;
    else hi = mid;
  }
  return lo;
}

double dyn_pw_at(dyn_pw *p, double t) {
  size_t k = piece(p, t); /* first: it may move p->v */
  return p->v[k];
}

double dyn_pw_next(dyn_pw *p, double t) {
  size_t k = piece(p, t);
  return k + 1 < p->n ? p->t[k + 1] : INFINITY;
}
