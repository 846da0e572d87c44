/* [policies/include/base -> hetsim::status; not installed]
 * hs_select.h: the one quickselect of the tree (libc only, hetsim::status), so
 * the controller (policies/), the run and the regimes (sim/) select with the
 * same code.
 *
 * hs_select(a, m, k), k < m: reorders a[0..m) so that a[k] is the value of rank
 * k (0-based) in ascending order, with a[0..k) <= a[k] <= a(k..m), and returns
 * a[k]. Expected O(m), no allocation, deterministic (same input, same
 * permutation left behind). Ties: equal values are interchangeable, so the
 * value returned is that of a sort; which of two equal keys (+0 and -0) lands
 * at k is the algorithm's, not a sort's. NaN: keys must not be NaN; with one
 * the call still ends (every scan stops at the pivot's place or at a key that
 * stopped the scan before) and returns one of the keys, which one unspecified.
 *
 * HS_SELECT_DEFINE(name, T, BEFORE) writes the same selection for any element
 * type T on a strict weak order BEFORE(const T *x, const T *y) (true when x
 * goes first): `static void name(T *a, size_t m, size_t k)`, k < m, leaves
 * a[k] the element of rank k and a[0..k) not after it, a(k..m) not before it.
 * hs_select is this on doubles with `<`; the controller's largest remainders
 * (pol_top_k) are this on (frac desc, idx asc).
 *
 * The algorithm: Hoare partition (Wirth's FIND) around the median of the first,
 * middle and last keys (which the pivot step sorts in place); both scans stop
 * on keys equal to the pivot, so runs of equal keys (identical devices) split
 * evenly instead of going quadratic; signed indices because j may step below
 * lo; narrows to the side holding k only. Rejected: a comparator callback
 * (an indirect call per comparison, in the controller's 10^6-participant
 * update), Lomuto and three-way partitions (slower, see policies/src/select.c)
 * and introselect's median-of-medians fallback (only defends against
 * adversarial inputs, which telemetry is not). */
#ifndef HS_SELECT_H
#define HS_SELECT_H

#include <stddef.h>

double hs_select(double *a, size_t m, size_t k);

#define HS_SELECT_DEFINE(name, T, BEFORE)                                     \
  static void name(T *a, size_t m, size_t k) {                               \
    ptrdiff_t lo = 0, hi = (ptrdiff_t)m - 1, kk = (ptrdiff_t)k;              \
    while (lo < hi) {                                                        \
      ptrdiff_t mid = lo + (hi - lo) / 2;                                    \
      T t_;                                                                  \
      if (BEFORE(&a[mid], &a[lo])) t_ = a[mid], a[mid] = a[lo], a[lo] = t_; \
      if (BEFORE(&a[hi], &a[lo])) t_ = a[hi], a[hi] = a[lo], a[lo] = t_;    \
      if (BEFORE(&a[hi], &a[mid])) t_ = a[hi], a[hi] = a[mid], a[mid] = t_; \
      T p_ = a[mid];                                                         \
      ptrdiff_t i = lo, j = hi;                                              \
      while (i <= j) {                                                       \
        while (BEFORE(&a[i], &p_)) i++;                                      \
        while (BEFORE(&p_, &a[j])) j--;                                      \
        if (i <= j) {                                                        \
          t_ = a[i], a[i] = a[j], a[j] = t_;                                 \
          i++;                                                               \
          j--;                                                               \
        }                                                                    \
      }                                                                      \
      if (kk <= j)                                                           \
        hi = j;                                                              \
      else if (kk >= i)                                                      \
        lo = i;                                                              \
      else                                                                   \
        break; /* j < k < i: a[k] equals the pivot */                        \
    }                                                                        \
  }

#endif
