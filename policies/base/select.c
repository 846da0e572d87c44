/* select.c: hs_select (hs_select.h), the quickselect on doubles: the one
 * selection written in HS_SELECT_DEFINE, instantiated with `<`. Out of line
 * (one call per selection, each O(m)) so callers in every folder share one
 * copy. The contract (rank k at k, partition around it, ties, NaN) is in the
 * header; tests/unit/test_select.c checks it with known answers. */
#include <assert.h>

#include "base/hs_select.h"

#define HS_LESS_D(x, y) (*(x) < *(y))
HS_SELECT_DEFINE(select_d, double, HS_LESS_D)

double hs_select(double *a, size_t m, size_t k) {
  assert(k < m);
  select_d(a, m, k);
  return a[k];
}
