/* test_policy_select.c: the O(n) kernels under the controller (policies/src,
 * folder-internal): quickselect, the median (both the sample-bracket path and
 * its fallback), top-k by remainder, flagging the top k (ties, flagged
 * entries, bracket misses), and apportionment with a floor, each
 * against a sort-based reference; the apportionment also without its pair
 * buffer (remainders crowding one slice, ties, overshoot), which no split
 * of real weights at test sizes would reach. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_rng.h"
#include "pol_select.h"

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double ref_median(const double *a, size_t m) {
  double *s = hs_malloc(m * sizeof *s);
  memcpy(s, a, m * sizeof *s);
  qsort(s, m, sizeof *s, cmp_d);
  double r = m % 2 ? s[m / 2] : 0.5 * (s[m / 2 - 1] + s[m / 2]);
  hs_free(s);
  return r;
}

static double median_of_copy(const double *a, size_t m) {
  double *s = hs_malloc(m * sizeof *s);
  memcpy(s, a, m * sizeof *s);
  double r = pol_median(s, m);
  hs_free(s);
  return r;
}

Test(policy_select, median_small_known_answers) {
  cr_expect_eq(median_of_copy((double[]){3}, 1), 3);
  cr_expect_eq(median_of_copy((double[]){4, 1}, 2), 2.5);
  cr_expect_eq(median_of_copy((double[]){5, 1, 3}, 3), 3);
  cr_expect_eq(median_of_copy((double[]){8, 1, 4, 2}, 4), 3); /* (2+4)/2 */
  cr_expect_eq(median_of_copy((double[]){2, 2, 2, 2, 9}, 5), 2);
  cr_expect_eq(median_of_copy((double[]){7, 7, 1, 1}, 4), 4);
  /* the mean of the two middle values must not overflow */
  cr_expect_eq(median_of_copy((double[]){DBL_MAX, 1, DBL_MAX, DBL_MAX}, 4), DBL_MAX);
  cr_expect_eq(median_of_copy((double[]){DBL_MAX, 0, DBL_MAX, 1.5e308}, 4), 0.5 * DBL_MAX + 0.75e308);
}

Test(policy_select, median_matches_sort_on_random_and_tied_data) {
  hs_rng r;
  hs_rng_init(&r, 1, 0, HS_RNG_BENCH);
  size_t sizes[] = {2, 3, 10, 11, 100, 1001, 40000, 40001, 100000};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    size_t m = sizes[k];
    double *a = hs_malloc(m * sizeof *a);
    for (int variant = 0; variant < 3; variant++) {
      for (size_t i = 0; i < m; i++) {
        double u = hs_rng_uniform(&r);
        a[i] = variant == 0 ? u : variant == 1 ? floor(u * 5) : exp(8 * u); /* ties / skew */
      }
      cr_expect_eq(median_of_copy(a, m), ref_median(a, m), "m=%zu variant %d", m, variant);
    }
    hs_free(a);
  }
}

Test(policy_select, median_bracket_miss_falls_back_exactly) {
  /* every 20th value is 0 and the sample strides by exactly 20: the bracket
   * is [0, 0] and misses the median, the fallback must still be exact */
  size_t m = 2048 * 20;
  double *a = hs_malloc(m * sizeof *a);
  for (size_t i = 0; i < m; i++) a[i] = i % 20 == 0 ? 0.0 : (double)i;
  cr_expect_eq(median_of_copy(a, m), ref_median(a, m));
  /* sorted and reverse-sorted input (the classic quickselect worst cases) */
  for (size_t i = 0; i < m; i++) a[i] = (double)i;
  cr_expect_eq(median_of_copy(a, m), ref_median(a, m));
  for (size_t i = 0; i < m; i++) a[i] = (double)(m - i);
  cr_expect_eq(median_of_copy(a, m), ref_median(a, m));
  hs_free(a);
}

Test(policy_select, select_kth_matches_sort) {
  hs_rng r;
  hs_rng_init(&r, 2, 0, HS_RNG_BENCH);
  double a[257], s[257];
  for (int trial = 0; trial < 200; trial++) {
    size_t m = 1 + hs_rng_below(&r, 257), k = hs_rng_below(&r, m);
    for (size_t i = 0; i < m; i++) a[i] = s[i] = floor(hs_rng_uniform(&r) * 30);
    qsort(s, m, sizeof *s, cmp_d);
    cr_assert_eq(hs_select(a, m, k), s[k], "m=%zu k=%zu", m, k);
    for (size_t i = 0; i < k; i++) cr_assert_leq(a[i], a[k]);
    for (size_t i = k + 1; i < m; i++) cr_assert_geq(a[i], a[k]);
  }
}

static int cmp_rem(const void *a, const void *b) {
  const pol_rem *x = a, *y = b;
  if (x->frac != y->frac) return x->frac > y->frac ? -1 : 1;
  return (x->idx > y->idx) - (x->idx < y->idx);
}

Test(policy_select, top_k_is_the_sorted_prefix_as_a_set) {
  hs_rng r;
  hs_rng_init(&r, 3, 0, HS_RNG_BENCH);
  pol_rem a[300], s[300];
  for (int trial = 0; trial < 200; trial++) {
    size_t m = hs_rng_below(&r, 300) + 1, k = hs_rng_below(&r, m + 1);
    for (size_t i = 0; i < m; i++) {
      a[i].frac = floor(hs_rng_uniform(&r) * 4) / 4; /* many ties: order by idx */
      a[i].idx = (uint32_t)(m - i);
      s[i] = a[i];
    }
    pol_top_k(a, m, k);
    qsort(s, m, sizeof *s, cmp_rem);
    qsort(a, k, sizeof *a, cmp_rem);
    for (size_t i = 0; i < k; i++) cr_assert_eq(a[i].idx, s[i].idx, "m=%zu k=%zu i=%zu", m, k, i);
  }
}

/* Reference apportionment: water-filling then a full sort of remainders, with
 * the same floating-point expressions as select.c so results compare exactly. */
/* Returns whether the split overshot (rounding made the floors sum past the
 * budget: one sample is then taken back from the smallest remainders above
 * the floor, the higher index first). */
static bool ref_apportion(const double *w, size_t m, uint64_t budget, uint64_t fl, uint64_t *out) {
  unsigned char *pinned = hs_calloc(m, 1);
  uint64_t rest = budget;
  double wsum;
  for (;;) {
    wsum = 0;
    for (size_t i = 0; i < m; i++)
      if (!pinned[i]) wsum += w[i];
    if (!fl) break;
    double wmin = (double)fl * wsum / (double)rest;
    int moved = 0;
    for (size_t i = 0; i < m; i++)
      if (!pinned[i] && w[i] < wmin) pinned[i] = 1, out[i] = fl, rest -= fl, moved = 1;
    if (!moved) break;
  }
  double scale = (double)rest / wsum;
  pol_rem *rem = hs_calloc(m, sizeof *rem);
  size_t na = 0;
  uint64_t given = 0;
  for (size_t i = 0; i < m; i++) {
    if (pinned[i]) continue;
    double q = w[i] * scale;
    uint64_t b = (uint64_t)floor(q);
    if (b < fl) b = fl;
    if (b > rest) b = rest;
    out[i] = b;
    given += b;
    rem[na++] = (pol_rem){q - (double)b, (uint32_t)i};
  }
  bool over = given > rest;
  if (!over) {
    qsort(rem, na, sizeof *rem, cmp_rem);
    uint64_t r = rest - given, each = na ? r / na : 0;
    for (size_t j = 0; j < na; j++) out[rem[j].idx] += each;
    for (uint64_t j = 0; j < r - each * na; j++) out[rem[j].idx]++;
  } else { /* (frac asc, index desc) among those above the floor */
    size_t ne = 0;
    for (size_t j = 0; j < na; j++)
      if (out[rem[j].idx] > fl) rem[ne++] = (pol_rem){-rem[j].frac, UINT32_MAX - rem[j].idx};
    qsort(rem, ne, sizeof *rem, cmp_rem);
    cr_assert_leq(given - rest, ne);
    for (uint64_t j = 0; j < given - rest; j++) out[UINT32_MAX - rem[j].idx]--;
  }
  hs_free(rem);
  hs_free(pinned);
  return over;
}

Test(policy_select, apportion_matches_reference_small_and_bucketed) {
  hs_rng r;
  hs_rng_init(&r, 4, 0, HS_RNG_BENCH);
  size_t sizes[] = {1, 2, 7, 64, 1000, 20000, 70000};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    size_t m = sizes[s];
    double *w = hs_malloc(m * sizeof *w);
    uint32_t *idx = hs_malloc(m * sizeof *idx);
    uint64_t *got = hs_calloc(m, sizeof *got), *want = hs_calloc(m, sizeof *want);
    pol_scratch sc;
    pol_scratch_init(&sc, m);
    for (int trial = 0; trial < 4; trial++) {
      for (size_t i = 0; i < m; i++) {
        w[i] = exp(3 * hs_rng_uniform(&r));
        idx[i] = (uint32_t)i;
      }
      uint64_t fl = trial % 2 ? 1 + hs_rng_below(&r, 20) : 0;
      uint64_t budget = fl * m + hs_rng_below(&r, 50 * m + 1);
      ref_apportion(w, m, budget, fl, want); /* first: pol_apportion consumes w */
      pol_apportion(idx, m, w, budget, fl, got, &sc);
      uint64_t sum = 0;
      for (size_t i = 0; i < m; i++) {
        sum += got[i];
        cr_assert_eq(got[i], want[i], "m=%zu trial %d i=%zu", m, trial, i);
      }
      cr_assert_eq(sum, budget);
    }
    pol_scratch_fini(&sc);
    hs_free(w);
    hs_free(idx);
    hs_free(got);
    hs_free(want);
  }
}

/* pol_kth_of: the k-th smallest without reordering, at every rank class
 * (ends, near the ends, middle), with ties, and when its bracket misses
 * (values aliasing with the sample's stride of m/2048). */
Test(policy_select, kth_of_matches_sort_and_leaves_the_input) {
  hs_rng r;
  hs_rng_init(&r, 15, 0, HS_RNG_BENCH);
  size_t sizes[] = {1, 9, 1000, 32767, 40000, 120000};
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    size_t m = sizes[si];
    double *a = hs_malloc(m * sizeof *a), *keep = hs_malloc(m * sizeof *keep);
    double *s = hs_malloc(m * sizeof *s), *tmp = hs_malloc(m * sizeof *tmp);
    size_t stride = m >= 2048 ? m / 2048 : 1; /* the sample's */
    for (int trial = 0; trial < 3; trial++) {
      for (size_t i = 0; i < m; i++)
        a[i] = trial == 0   ? hs_rng_uniform(&r)
               : trial == 1 ? floor(hs_rng_uniform(&r) * 7) /* heavy ties */
                            : (i % stride == 0 ? 1e9 : hs_rng_uniform(&r)); /* aliasing */
      memcpy(keep, a, m * sizeof *a);
      memcpy(s, a, m * sizeof *a);
      qsort(s, m, sizeof *s, cmp_d);
      size_t ks[] = {0, 1, m / 1000, m / 3, m / 2, m - m / 1000 - 1, m - 2, m - 1};
      for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
        if (ks[j] >= m) continue;
        cr_assert_eq(pol_kth_of(a, m, ks[j], tmp), s[ks[j]], "m=%zu trial %d k=%zu", m, trial,
                     ks[j]);
        cr_assert(memcmp(a, keep, m * sizeof *a) == 0, "m=%zu: the input moved", m);
      }
    }
    hs_free(a);
    hs_free(keep);
    hs_free(s);
    hs_free(tmp);
  }
}

/* A group is an ascending subset of the participants: apportion over every
 * third index of 3m (writing only those) equals the reference over the m
 * weights in that order; floors that pin some, at sizes with and without the
 * remainder histogram. */
Test(policy_select, apportion_over_a_subset_writes_only_it) {
  hs_rng r;
  hs_rng_init(&r, 14, 0, HS_RNG_BENCH);
  size_t sizes[] = {5, 3000, 30000};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    size_t m = sizes[s], n = 3 * m;
    double *w = hs_malloc(n * sizeof *w), *wm = hs_malloc(m * sizeof *wm);
    uint32_t *idx = hs_malloc(m * sizeof *idx);
    uint64_t *got = hs_malloc(n * sizeof *got), *want = hs_calloc(m, sizeof *want);
    pol_scratch sc;
    pol_scratch_init(&sc, n);
    for (int trial = 0; trial < 4; trial++) {
      for (size_t i = 0; i < n; i++) {
        w[i] = exp(4 * hs_rng_uniform(&r));
        got[i] = 7777;
      }
      for (size_t j = 0; j < m; j++) {
        idx[j] = (uint32_t)(3 * j + 1);
        wm[j] = w[idx[j]];
      }
      uint64_t fl = trial % 2 ? 1 + hs_rng_below(&r, 20) : 0;
      uint64_t budget = fl * m + hs_rng_below(&r, 30 * m + 1);
      pol_apportion(idx, m, w, budget, fl, got, &sc);
      ref_apportion(wm, m, budget, fl, want);
      for (size_t i = 0; i < n; i++)
        if (i % 3 != 1) cr_assert_eq(got[i], 7777, "m=%zu: %zu is not in the subset", m, i);
      for (size_t j = 0; j < m; j++)
        cr_assert_eq(got[idx[j]], want[j], "m=%zu trial %d j=%zu", m, trial, j);
    }
    pol_scratch_fini(&sc);
    hs_free(w);
    hs_free(wm);
    hs_free(idx);
    hs_free(got);
    hs_free(want);
  }
}

Test(policy_select, kth_and_flag_top_k_match_sort_at_scale) {
  hs_rng r;
  hs_rng_init(&r, 5, 0, HS_RNG_BENCH);
  size_t m = 50000; /* above the sample-bracket threshold */
  double *a = hs_malloc(m * sizeof *a), *s = hs_malloc(m * sizeof *s), *tmp = hs_malloc(m * sizeof *tmp);
  pol_rem *sorted = hs_malloc(m * sizeof *sorted);
  unsigned char *flag = hs_calloc(m, 1);
  for (size_t i = 0; i < m; i++) s[i] = floor(hs_rng_uniform(&r) * 1000); /* ties */
  memcpy(a, s, m * sizeof *a);
  qsort(s, m, sizeof *s, cmp_d);
  size_t ks[] = {0, 1, 10, m / 3, m / 2, m - 11, m - 1};
  for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
    memcpy(tmp, a, m * sizeof *a);
    cr_assert_eq(pol_kth(tmp, m, ks[j]), s[ks[j]], "k=%zu", ks[j]);
  }
  for (size_t i = 0; i < m; i++) sorted[i] = (pol_rem){a[i], (uint32_t)i};
  qsort(sorted, m, sizeof *sorted, cmp_rem);
  uint32_t *band = hs_malloc(m * sizeof *band);
  size_t tops[] = {1, 77, m / 2, m - 1};
  for (size_t j = 0; j < sizeof tops / sizeof tops[0]; j++) {
    memset(flag, 0, m);
    pol_flag_top_k(a, m, tops[j], flag, tmp, band);
    size_t marked = 0;
    for (size_t i = 0; i < m; i++) marked += flag[i];
    cr_assert_eq(marked, tops[j]);
    for (size_t i = 0; i < tops[j]; i++) cr_assert(flag[sorted[i].idx], "k=%zu: rank %zu unmarked", tops[j], i);
  }
  hs_free(band);
  hs_free(a);
  hs_free(s);
  hs_free(tmp);
  hs_free(sorted);
  hs_free(flag);
}

/* pol_flag_top_k against a sort: the unflagged entries ordered by (key desc,
 * index asc), the first k of them flagged, nothing else changed. */
static void check_flag_top_k(const double *key, size_t n, size_t k, const unsigned char *before,
                             const char *what) {
  unsigned char *got = hs_malloc(n);
  memcpy(got, before, n);
  double *tmp = hs_malloc(n * sizeof *tmp);
  uint32_t *band = hs_malloc(n * sizeof *band);
  pol_flag_top_k(key, n, k, got, tmp, band);
  hs_free(tmp);
  hs_free(band);
  pol_rem *free_ = hs_malloc((n + 1) * sizeof *free_);
  size_t nf = 0;
  for (size_t i = 0; i < n; i++)
    if (!before[i]) free_[nf++] = (pol_rem){key[i], (uint32_t)i};
  qsort(free_, nf, sizeof *free_, cmp_rem);
  unsigned char *want = hs_malloc(n);
  memcpy(want, before, n);
  for (size_t j = 0; j < k; j++) want[free_[j].idx] = 1;
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(got[i], want[i], "%s: n=%zu k=%zu: entry %zu (key %g) flag %d, want %d", what,
                 n, k, i, key[i], got[i], want[i]);
  hs_free(free_);
  hs_free(want);
  hs_free(got);
}

/* Many ties (keys on a coarse grid, -inf, -0 and +0 mixed), some entries
 * flagged beforehand, sizes below and above the sample bracket's threshold,
 * k from 1 to every unflagged entry. */
Test(policy_select, flag_top_k_matches_sort_with_ties_and_flagged) {
  hs_rng r;
  hs_rng_init(&r, 11, 0, HS_RNG_BENCH);
  size_t sizes[] = {1, 2, 5, 100, 4097, 4 * POL_FLAG_SAMPLE - 1, 4 * POL_FLAG_SAMPLE, 50001, 200000};
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    size_t n = sizes[si];
    double *key = hs_malloc(n * sizeof *key);
    unsigned char *before = hs_malloc(n);
    for (int trial = 0; trial < (n > 40000 ? 3 : 12); trial++) {
      double grid = trial % 3 == 0 ? 3 : trial % 3 == 1 ? 50 : 1e9; /* ties: many, some, few */
      double pflag = trial % 4 == 0 ? 0 : 0.05 * (double)(trial % 4) * 3; /* 0, 15, 30, 45 % */
      size_t nfree = 0;
      for (size_t i = 0; i < n; i++) {
        double u = hs_rng_uniform(&r);
        key[i] = u < 0.05 ? -INFINITY : u < 0.07 ? -0.0 : u < 0.09 ? 0.0
                                                         : floor(hs_rng_uniform(&r) * grid) - grid / 2;
        before[i] = hs_rng_uniform(&r) < pflag;
        nfree += !before[i];
      }
      if (!nfree) continue;
      size_t ks[] = {1, 2, nfree / 10 + 1, nfree / 2, nfree - nfree / 20, nfree - 1, nfree,
                     hs_rng_below(&r, nfree) + 1};
      for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++)
        if (ks[j] >= 1 && ks[j] <= nfree) check_flag_top_k(key, n, ks[j], before, "random");
    }
    hs_free(key);
    hs_free(before);
  }
}

/* The sample bracket missing (keys aliasing with the sample's stride, or a
 * sample that is all flagged) only costs time: the result is still exact. */
Test(policy_select, flag_top_k_exact_when_the_bracket_misses) {
  size_t n = 4 * POL_FLAG_SAMPLE, stride = n / POL_FLAG_SAMPLE;
  double *key = hs_malloc(n * sizeof *key);
  unsigned char *before = hs_calloc(n, 1);
  hs_rng r;
  hs_rng_init(&r, 12, 0, HS_RNG_BENCH);
  /* every sampled entry holds the largest key: the bracket sits at the top */
  for (size_t i = 0; i < n; i++) key[i] = i % stride == 0 ? 1000 : floor(hs_rng_uniform(&r) * 100);
  check_flag_top_k(key, n, n / 2, before, "aliased high");
  check_flag_top_k(key, n, POL_FLAG_SAMPLE, before, "aliased high, k = the sampled");
  /* every sampled entry holds the smallest key */
  for (size_t i = 0; i < n; i += stride) key[i] = -1000;
  check_flag_top_k(key, n, n / 2, before, "aliased low"); /* everything free is above it */
  check_flag_top_k(key, n, 3, before, "aliased low, k small");
  check_flag_top_k(key, n, n - 100, before, "aliased low, k near n");
  /* every sampled entry flagged: no sample at all */
  for (size_t i = 0; i < n; i += stride) before[i] = 1;
  check_flag_top_k(key, n, 5000, before, "sample flagged");
  hs_free(key);
  hs_free(before);
}

/* The remainders' exact order without the pair buffer (scratch cap lowered
 * to 0, 1, 37: what a slice crowded past POL_PAIRS does at 10^7), against the
 * reference: random weights, all equal (every remainder tied: ties in index
 * order), remainders crowded in one histogram slice yet distinct (radix
 * passes), a few weight classes (ties in blocks); with and without floors,
 * below and above the histogram size. */
Test(policy_select, apportion_without_the_pair_buffer) {
  hs_rng r;
  hs_rng_init(&r, 21, 0, HS_RNG_BENCH);
  size_t sizes[] = {1, 7, 1000, 20000, 70000};
  size_t caps[] = {0, 1, 37, (size_t)-1};
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    size_t m = sizes[si];
    double *w = hs_malloc(m * sizeof *w), *w0 = hs_malloc(m * sizeof *w0);
    uint32_t *idx = hs_malloc(m * sizeof *idx);
    uint64_t *got = hs_calloc(m, sizeof *got), *want = hs_calloc(m, sizeof *want);
    pol_scratch sc;
    pol_scratch_init(&sc, m);
    size_t cap0 = sc.cap;
    for (int kind = 0; kind < 4; kind++) {
      for (size_t i = 0; i < m; i++) {
        idx[i] = (uint32_t)i;
        w0[i] = kind == 0   ? exp(3 * hs_rng_uniform(&r))
                : kind == 1 ? 2.5
                : kind == 2 ? 1.0 + 1e-13 * (double)((i * 7919) % m)
                            : (double)(1 + hs_rng_below(&r, 3));
      }
      for (int trial = 0; trial < 2; trial++) {
        uint64_t fl = trial ? 1 + hs_rng_below(&r, 5) : 0;
        /* kind 2: shares 100.5 + ~1e-11 i, remainders in one slice */
        uint64_t budget = kind == 2 ? 100 * m + m / 2 + fl * m
                                    : fl * m + hs_rng_below(&r, 40 * m + 1);
        ref_apportion(w0, m, budget, fl, want);
        for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
          sc.cap = caps[c] < cap0 ? caps[c] : cap0;
          for (int into_w = 0; into_w < 2; into_w++) {
            memcpy(w, w0, m * sizeof *w);
            pol_apportion(idx, m, w, budget, fl, into_w ? NULL : got, &sc);
            uint64_t sum = 0;
            for (size_t i = 0; i < m; i++) {
              if (into_w) got[i] = (uint64_t)w[i];
              if (into_w) cr_assert_eq((double)got[i], w[i], "m=%zu: w[%zu] = %.17g", m, i, w[i]);
              sum += got[i];
              cr_assert_eq(got[i], want[i],
                           "m=%zu kind %d floor %llu cap %zu into_w %d: i=%zu got %llu want %llu",
                           m, kind, (unsigned long long)fl, sc.cap, into_w, i,
                           (unsigned long long)got[i], (unsigned long long)want[i]);
            }
            cr_assert_eq(sum, budget);
          }
        }
      }
    }
    sc.cap = cap0;
    pol_scratch_fini(&sc);
    hs_free(w);
    hs_free(w0);
    hs_free(idx);
    hs_free(got);
    hs_free(want);
  }
}

/* Rounding overshoot (shares near 2^53, where an ulp is a sample): the take-
 * back goes to the smallest remainders above the floor, the higher index
 * first, with the pair buffer and without it; the search must meet some. */
Test(policy_select, apportion_overshoot_takes_back_like_the_reference) {
  hs_rng r;
  hs_rng_init(&r, 22, 0, HS_RNG_BENCH);
  size_t hits = 0;
  for (int trial = 0; trial < 20000; trial++) {
    size_t m = 2 + hs_rng_below(&r, 60);
    double w0[64], w[64];
    uint32_t idx[64];
    uint64_t got[64], want[64];
    for (size_t i = 0; i < m; i++) {
      idx[i] = (uint32_t)i;
      w0[i] = hs_rng_below(&r, 2) ? 1.0 : 1.0 + hs_rng_uniform(&r);
    }
    uint64_t budget = (UINT64_C(1) << 53) - hs_rng_below(&r, 1000);
    if (!ref_apportion(w0, m, budget, 0, want)) continue;
    hits++;
    pol_scratch sc;
    pol_scratch_init(&sc, m);
    for (int v = 0; v < 4; v++) { /* no pair buffer / one; counts into out / w */
      sc.cap = v & 1 ? m : 0;
      bool into_w = v >> 1;
      memcpy(w, w0, m * sizeof *w);
      pol_apportion(idx, m, w, budget, 0, into_w ? NULL : got, &sc);
      for (size_t i = 0; i < m; i++) {
        if (into_w) got[i] = (uint64_t)w[i];
        cr_assert_eq(got[i], want[i], "trial %d m=%zu cap %zu into_w %d i=%zu", trial, m, sc.cap,
                     into_w, i);
      }
    }
    sc.cap = m;
    pol_scratch_fini(&sc);
  }
  cr_assert_gt(hits, 30, "only %zu overshooting splits met", hits);
}

/* pol_median_of: the median of the selected values equals the sorted
 * reference over them, on every path: below the sample size, a sample
 * bracket that holds the median, a mostly unselected group (too thin a
 * sample), ties, values aliasing with the sample's stride (a miss), none
 * selected; x and sel are left as they were. */
Test(policy_select, median_of_the_selected_matches_sort) {
  hs_rng r;
  hs_rng_init(&r, 23, 0, HS_RNG_BENCH);
  size_t sizes[] = {1, 2, 9, 1000, 40000, 40001, 120000};
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    size_t n = sizes[si] + 7, m = sizes[si];
    double *x = hs_malloc(n * sizeof *x), *keep = hs_malloc(n * sizeof *keep);
    double *tmp = hs_malloc(m * sizeof *tmp), *v = hs_malloc(m * sizeof *v);
    unsigned char *sel = hs_malloc(n);
    uint32_t *idx = hs_malloc(m * sizeof *idx);
    /* ascending, with a gap of 7 unlisted entries in the middle */
    for (size_t j = 0; j < m; j++) idx[j] = (uint32_t)j + (uint32_t)(j >= m / 2 ? 7 : 0);
    size_t stride = m >= 2048 ? m / 2048 : 1;
    for (int trial = 0; trial < 36; trial++) {
      int kind = trial % 6;
      for (size_t i = 0; i < n; i++) {
        double u = hs_rng_uniform(&r);
        x[i] = kind == 1 ? floor(u * 5) : kind == 3 ? (i % stride == 0 ? -1e9 : u) : u;
        sel[i] = kind == 2 ? hs_rng_below(&r, 50) == 0 : kind == 4 ? 0
                 : kind == 5 ? 1 : hs_rng_below(&r, 2);
      }
      memcpy(keep, x, n * sizeof *x);
      size_t nv = 0;
      for (size_t j = 0; j < m; j++)
        if (sel[idx[j]]) v[nv++] = x[idx[j]];
      size_t cnt = 99;
      double got = pol_median_of(x, idx, m, sel, tmp, &cnt);
      cr_assert_eq(cnt, nv, "m=%zu kind %d", m, kind);
      if (nv) cr_assert_eq(got, ref_median(v, nv), "m=%zu kind %d count %zu", m, kind, nv);
      else cr_assert_eq(got, 0.0);
      cr_assert(memcmp(x, keep, n * sizeof *x) == 0, "m=%zu: x moved", m);
    }
    hs_free(x);
    hs_free(keep);
    hs_free(tmp);
    hs_free(v);
    hs_free(sel);
    hs_free(idx);
  }
}
