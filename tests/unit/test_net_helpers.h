/* test_net_helpers.h: what the network's test files share: a relative
 * comparison (near, expect_near), a completion log
 * (each flow's finish time and the order of completions) and a network of
 * one shared link. static inline, so a file that uses part of it compiles
 * without unused-function warnings. */
#ifndef TEST_NET_HELPERS_H
#define TEST_NET_HELPERS_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "sim/hs_engine.h"
#include "sim/hs_net.h"

#define MB 1e6 /* bytes */

static inline bool near(double got, double want) {
  return fabs(got - want) <= 1e-9 * fmax(1.0, fabs(want));
}

#define expect_near(got, want) \
  cr_expect(near((got), (want)), "got %.15g, want %.15g", (double)(got), (double)(want))

/* ---- completion log ---- */

#define MAXF 2048
typedef struct logbook {
  double t[MAXF];
  uint64_t order[MAXF];
  size_t n;
} logbook;

static inline void on_done(hs_engine *eng, void *subject, uint64_t arg) {
  logbook *lb = subject;
  cr_assert(arg < MAXF);
  lb->t[arg] = hs_engine_now(eng);
  lb->order[lb->n++] = arg;
}

static inline logbook *logbook_new(void) {
  logbook *lb = calloc(1, sizeof *lb);
  for (size_t i = 0; i < MAXF; i++) lb->t[i] = NAN;
  return lb;
}

/* A network on e with one shared link "l" of bw bit/s and no latency. */
static inline hs_net *net_one_link(hs_engine *e, double bw, int *link) {
  hs_net *n = hs_net_create(e);
  *link = hs_net_add_link(n, "l", bw, 0);
  return n;
}

#endif
