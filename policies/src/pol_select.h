/* pol_select.h: the O(n) kernels under every split (select.c): quickselect,
 * medians, top-k by remainder and largest-remainder apportionment with a floor.
 * Folder-internal: policy files and the tests of the kernels include it;
 * nothing outside policies/ does. */
#ifndef POL_SELECT_H
#define POL_SELECT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/hs_select.h"

/* c ? a : b without a branch, for conditions that are a coin toss per
 * participant (GCC turns a plain ternary on doubles into a branch, and half
 * of its outcomes are then mispredicted). Bit-exact: one of a and b is
 * returned unchanged. */
static inline double pol_sel(unsigned c, double a, double b) {
  uint64_t m = (uint64_t)0 - (uint64_t)(c != 0), ia, ib;
  memcpy(&ia, &a, sizeof ia);
  memcpy(&ib, &b, sizeof ib);
  uint64_t r = (ia & m) | (ib & ~m);
  double d;
  memcpy(&d, &r, sizeof d);
  return d;
}

/* A remainder for largest-remainder apportionment: larger frac first, then the
 * lower participant index. */
typedef struct pol_rem {
  double frac;
  uint32_t idx;
} pol_rem;

/* Scratch for apportionment, sized for n participants: 4 bytes each plus a
 * fixed part (the shares and remainders live in the weights array, see
 * pol_apportion). */
typedef struct pol_scratch {
  uint32_t *act;   /* n: active (not floored) participants; pol_flag_top_k's band */
  pol_rem *pairs;  /* cap: the remainders ordered exactly (one histogram slice) */
  size_t cap;      /* min(n, POL_PAIRS); a test may lower it to force the
                      buffer-free selection */
  uint32_t *hist;  /* POL_BUCKETS: remainder histogram */
} pol_scratch;

#define POL_BUCKETS 4096
#define POL_PAIRS (4 * POL_BUCKETS) /* 256 KiB of pairs: a slice of ~1/4096 of 10^7 remainders */

void pol_scratch_init(pol_scratch *s, size_t n);
void pol_scratch_fini(pol_scratch *s);

/* Quickselect on doubles: hs_select (base/hs_select.h). */
/* Same contract as hs_select, faster for large m (sample bracket, ~1.2
 * passes); reorders a. */
double pol_kth(double *a, size_t m, size_t k);
/* The k-th smallest of a[0..m) without reordering a (k < m): the same value
 * as pol_kth on a copy, one pass for large m. tmp: scratch for m doubles. */
double pol_kth_of(const double *a, size_t m, size_t k, double *tmp);
/* Median of a[0..m) (reorders a); m >= 1. Even m: mean of the two middle values. */
double pol_median(double *a, size_t m);
/* The median (pol_median's) of the values x[idx[j]] whose sel[idx[j]] is
 * set, j < m, and their count in *count; 0 when none. x and sel stay as
 * they are; tmp: scratch for m doubles. Expected O(m), one pass over the
 * values for large m. */
double pol_median_of(const double *x, const uint32_t *idx, size_t m, const unsigned char *sel,
                     double *tmp, size_t *count);
/* Reorders r[0..m) so that its first k entries are the k largest by (frac desc,
 * idx asc). Expected O(m). k <= m. */
void pol_top_k(pol_rem *r, size_t m, size_t k);

/* Flags the k entries i of [0,n) with flag[i] == 0 that come first by
 * (key[i] desc, i asc): flag[i] = 1 for them, every other flag unchanged.
 * Entries flagged on entry take no part (a key of -inf takes part, after
 * every finite key). flag[] holds 0/1; keys must not be NaN; k <= the number
 * of unflagged entries. Scratch: tmp (n doubles) and band (n indices). Expected O(n):
 * one counting pass bracketed by a sample (Floyd-Rivest idea), one byte pass,
 * and an exact selection only inside the bracket (~5 % of the entries). */
#define POL_FLAG_SAMPLE 8192 /* its sample: every (n/POL_FLAG_SAMPLE)-th entry, from n >= 4x this */
void pol_flag_top_k(const double *key, size_t n, size_t k, unsigned char *flag, double *tmp,
                    uint32_t *band);

/* Split `budget` over the m participants idx[0..m) (ascending) in proportion
 * to w[idx[j]] (finite, > 0), each getting >= floor (water-filling), integers
 * by largest remainder, ties to the lower index. Writes out[idx[j]] only;
 * out NULL: the counts go to w[idx[j]] instead, as exact integers (a caller
 * that needs no separate count array). Consumes the weights either way:
 * they hold the exact shares while the remainders are ordered (no 16-byte
 * remainder pair per participant). Requires budget >= m*floor (asserted). */
void pol_apportion(const uint32_t *idx, size_t m, double *w, uint64_t budget, uint64_t floor,
                   uint64_t *out, pol_scratch *s);
/* The same split for a caller that made the weights and took, in the same
 * pass, their sum in idx order (wsum = +0.0 + w[idx[0]] + w[idx[1]] + ...,
 * so bit-identical to the kernel's own) and their minimum wlo: saves the
 * kernel that pass over the weights (checked in debug builds). */
void pol_apportion_sum(const uint32_t *idx, size_t m, double *w, double wsum, double wlo,
                       uint64_t budget, uint64_t floor, uint64_t *out, pol_scratch *s);

#endif
