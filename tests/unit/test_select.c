/* test_select.c: hs_select and HS_SELECT_DEFINE (base/hs_select.h), the one
 * quickselect the controller and the simulator share. Known answers worked
 * out by hand: ties and duplicates, k at both ends, the partition left
 * behind (callers select again inside it), a strict order on structs with
 * ties broken by index (the controller's remainders), and NaN: the call ends
 * and returns one of the keys. */
#include <criterion/criterion.h>

#include <math.h>
#include <stddef.h>

#include "base/hs_select.h"

/* a[0..k) <= a[k] <= a(k..m) */
static void assert_partition(const double *a, size_t m, size_t k) {
  for (size_t i = 0; i < k; i++) cr_assert_leq(a[i], a[k], "a[%zu] = %g left of a[%zu] = %g", i, a[i], k, a[k]);
  for (size_t i = k + 1; i < m; i++) cr_assert_geq(a[i], a[k], "a[%zu] = %g right of a[%zu] = %g", i, a[i], k, a[k]);
}

Test(select, every_rank_of_a_small_array) {
  /* sorted: 1 2 3 5 8 9 */
  const double in[] = {5, 9, 1, 8, 3, 2}, want[] = {1, 2, 3, 5, 8, 9};
  for (size_t k = 0; k < 6; k++) {
    double a[6];
    for (size_t i = 0; i < 6; i++) a[i] = in[i];
    cr_assert_eq(hs_select(a, 6, k), want[k], "k=%zu", k);
    cr_assert_eq(a[k], want[k]);
    assert_partition(a, 6, k);
  }
}

Test(select, ties_and_duplicates) {
  /* sorted: 2 2 2 4 4 7 7 7 7 */
  const double in[] = {7, 2, 4, 7, 2, 7, 4, 2, 7}, want[] = {2, 2, 2, 4, 4, 7, 7, 7, 7};
  for (size_t k = 0; k < 9; k++) {
    double a[9];
    for (size_t i = 0; i < 9; i++) a[i] = in[i];
    cr_assert_eq(hs_select(a, 9, k), want[k], "k=%zu", k);
    assert_partition(a, 9, k);
  }
  double same[50];
  for (size_t i = 0; i < 50; i++) same[i] = 3.5;
  cr_assert_eq(hs_select(same, 50, 0), 3.5);
  cr_assert_eq(hs_select(same, 50, 49), 3.5);
  cr_assert_eq(hs_select(same, 50, 25), 3.5);
}

Test(select, k_at_both_ends_and_one_element) {
  double one[] = {-4};
  cr_assert_eq(hs_select(one, 1, 0), -4);
  double a[100];
  for (size_t i = 0; i < 100; i++) a[i] = (double)((i * 37) % 100) - 50; /* a permutation of -50..49 */
  cr_assert_eq(hs_select(a, 100, 0), -50);
  assert_partition(a, 100, 0);
  cr_assert_eq(hs_select(a, 100, 99), 49);
  assert_partition(a, 100, 99);
  cr_assert_eq(hs_select(a, 100, 50), 0);
  assert_partition(a, 100, 50);
  /* descending and infinite keys */
  double d[] = {INFINITY, 3, 2, 1, -INFINITY};
  cr_assert_eq(hs_select(d, 5, 0), -INFINITY);
  cr_assert_eq(hs_select(d, 5, 4), INFINITY);
  cr_assert_eq(hs_select(d, 5, 2), 2);
}

Test(select, a_second_selection_inside_the_first_partition) {
  /* what the device-profile percentiles do: p99 over all, p90 left of it */
  double a[200];
  for (size_t i = 0; i < 200; i++) a[i] = (double)((i * 71) % 200); /* 0..199 shuffled */
  cr_assert_eq(hs_select(a, 200, 197), 197);
  cr_assert_eq(hs_select(a, 198, 179), 179);
  cr_assert_eq(hs_select(a, 180, 99), 99);
  assert_partition(a, 180, 99);
}

Test(select, nan_ends_and_returns_one_of_the_keys) {
  const double in[] = {3, NAN, 1, 2, NAN, 5, 4};
  for (size_t k = 0; k < 7; k++) {
    double a[7];
    for (size_t i = 0; i < 7; i++) a[i] = in[i];
    double v = hs_select(a, 7, k);
    bool found = isnan(v);
    for (size_t i = 0; i < 7 && !found; i++) found = in[i] == v;
    cr_assert(found, "k=%zu: %g is none of the keys", k, v);
    /* a permutation: still two NaNs and the five numbers */
    size_t nans = 0;
    double sum = 0;
    for (size_t i = 0; i < 7; i++) {
      if (isnan(a[i]))
        nans++;
      else
        sum += a[i];
    }
    cr_assert_eq(nans, 2);
    cr_assert_eq(sum, 15);
  }
}

typedef struct {
  double key;
  unsigned idx;
} item;

/* key desc, idx asc: a strict total order (indices distinct) */
#define ITEM_BEFORE(x, y) ((x)->key > (y)->key || ((x)->key == (y)->key && (x)->idx < (y)->idx))
HS_SELECT_DEFINE(select_items, item, ITEM_BEFORE)

Test(select, struct_order_breaks_ties_by_index) {
  /* order: (9,4) (5,0) (5,2) (5,6) (1,1) (1,3) (0,5) */
  item a[] = {{5, 0}, {1, 1}, {5, 2}, {1, 3}, {9, 4}, {0, 5}, {5, 6}};
  const unsigned want[] = {4, 0, 2, 6, 1, 3, 5};
  for (size_t k = 0; k < 7; k++) {
    item b[7];
    for (size_t i = 0; i < 7; i++) b[i] = a[i];
    select_items(b, 7, k);
    cr_assert_eq(b[k].idx, want[k], "k=%zu: idx %u", k, b[k].idx);
    for (size_t i = 0; i < k; i++) cr_assert(ITEM_BEFORE(&b[i], &b[k]), "k=%zu i=%zu", k, i);
    for (size_t i = k + 1; i < 7; i++) cr_assert(ITEM_BEFORE(&b[k], &b[i]), "k=%zu i=%zu", k, i);
  }
}
