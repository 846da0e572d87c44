/* test_learn_partition.c: splitting the training set (partition.c) and the
 * participants' seeded draws (hs_learn_draw), on a small IDX set written by
 * test_learn_data.h: 200 training images (and 50 t10k ones), label i % 10
 * (20 per class). */
#include <criterion/criterion.h>
#include <math.h>

#include "learn/hs_learn.h"
#include "learn/hs_learn_parts.h"
#include "test_learn_data.h"

static char *dir;
static hs_learner *L;

static void setup(void) {
  dir = tl_mnist(200, 6, 1);
  cr_assert_not_null(dir);
  hs_error e = {HS_OK, ""};
  cr_assert_eq(tl_learner(dir, HS_LEARN_SGD, 0.1, 8, 1, &L, &e), HS_OK, "%s", e.msg);
}

static void teardown(void) {
  hs_learn_destroy(L);
  tl_rmrf(dir);
  free(dir);
}

TestSuite(learn_partition, .init = setup, .fini = teardown);

/* Every training sample in exactly one part; parts sorted; sizes as given. */
static void check_cover(unsigned P, int exact) {
  size_t n = hs_learn_train_count(L);
  unsigned char *seen = calloc(n, 1);
  for (unsigned p = 0; p < P; p++) {
    const uint32_t *s = hs_learn_part_samples(L, p);
    size_t m = hs_learn_part_size(L, p);
    cr_assert(m > 0, "participant %u empty", p);
    for (size_t k = 0; k < m; k++) {
      cr_assert(s[k] < n);
      cr_assert(k == 0 || s[k - 1] < s[k], "part %u not sorted", p);
      cr_assert_eq(seen[s[k]]++, 0, "sample %u in two parts", s[k]);
    }
  }
  for (size_t i = 0; exact && i < n; i++) cr_assert_eq(seen[i], 1, "sample %zu in no part", i);
  free(seen);
}

Test(learn_partition, iid_covers_every_sample_once) {
  hs_error e = {HS_OK, ""};
  cr_assert_eq(hs_learn_train_count(L), 200);
  hs_learn_part_cfg pc = {HS_LEARN_IID, 7, 0, NULL};
  cr_assert_eq(hs_learn_partition(L, &pc, &e), HS_OK, "%s", e.msg);
  cr_assert_eq(hs_learn_participants(L), 7);
  check_cover(7, 1);
  /* sizes floor(200 (p+1) / 7) - floor(200 p / 7): 28 or 29, total 200 */
  size_t want[7] = {28, 29, 28, 29, 28, 29, 29};
  for (unsigned p = 0; p < 7; p++) cr_expect_eq(hs_learn_part_size(L, p), want[p], "part %u", p);
}

Test(learn_partition, dirichlet_known_answers) {
  /* alpha 0.5 over 4 participants, seed 5: samples per participant and class
   * (classes 0..9, 20 each). The values are this implementation's for the
   * documented streams; a change in them is a change of the split. */
  hs_error e = {HS_OK, ""};
  hs_learn_part_cfg pc = {HS_LEARN_DIRICHLET, 4, 0.5, NULL};
  cr_assert_eq(hs_learn_partition(L, &pc, &e), HS_OK, "%s", e.msg);
  check_cover(4, 1);
  size_t got[4][10] = {{0}};
  for (unsigned p = 0; p < 4; p++)
    for (size_t k = 0; k < hs_learn_part_size(L, p); k++) got[p][hs_learn_label(L, hs_learn_part_samples(L, p)[k])]++;
  for (int c = 0; c < 10; c++) {
    size_t tot = 0;
    for (unsigned p = 0; p < 4; p++) tot += got[p][c];
    cr_assert_eq(tot, 20, "class %d: %zu samples", c, tot);
  }
  /* Cross-checked with an independent Python implementation of the documented
   * streams and split (devices/learn/bench/dirichlet_reference.py). */
  const size_t want[4][10] = {{7, 0, 0, 9, 2, 1, 1, 0, 14, 7},
                              {9, 9, 4, 1, 10, 18, 2, 12, 2, 8},
                              {0, 1, 8, 0, 6, 0, 0, 7, 2, 3},
                              {4, 10, 8, 10, 2, 1, 17, 1, 2, 2}};
  for (unsigned p = 0; p < 4; p++)
    for (int c = 0; c < 10; c++) cr_expect_eq(got[p][c], want[p][c], "participant %u class %d: %zu", p, c, got[p][c]);
  /* the same seed again: the same split, sample for sample */
  uint32_t before[200];
  size_t off = 0;
  for (unsigned p = 0; p < 4; p++) {
    memcpy(before + off, hs_learn_part_samples(L, p), hs_learn_part_size(L, p) * sizeof *before);
    off += hs_learn_part_size(L, p);
  }
  cr_assert_eq(hs_learn_partition(L, &pc, &e), HS_OK);
  off = 0;
  for (unsigned p = 0; p < 4; p++) {
    cr_assert(memcmp(before + off, hs_learn_part_samples(L, p), hs_learn_part_size(L, p) * sizeof *before) == 0);
    off += hs_learn_part_size(L, p);
  }
}

Test(learn_partition, dirichlet_skew_grows_as_alpha_falls) {
  /* Mean over classes of the share of the class held by its largest holder,
   * two participants: about 1/2 for a huge alpha, near 1 for a small one. */
  hs_error e = {HS_OK, ""};
  double share[2];
  double alphas[2] = {1000.0, 0.1};
  for (int a = 0; a < 2; a++) {
    hs_learn_part_cfg pc = {HS_LEARN_DIRICHLET, 2, alphas[a], NULL};
    cr_assert_eq(hs_learn_partition(L, &pc, &e), HS_OK, "%s", e.msg);
    size_t cnt[2][10] = {{0}};
    for (unsigned p = 0; p < 2; p++)
      for (size_t k = 0; k < hs_learn_part_size(L, p); k++) cnt[p][hs_learn_label(L, hs_learn_part_samples(L, p)[k])]++;
    double s = 0;
    for (int c = 0; c < 10; c++) s += (double)(cnt[0][c] > cnt[1][c] ? cnt[0][c] : cnt[1][c]) / 20.0;
    share[a] = s / 10;
  }
  cr_assert(share[0] < 0.6, "alpha 1000: largest holder's share %g", share[0]);
  cr_assert(share[1] > 0.8, "alpha 0.1: largest holder's share %g", share[1]);
}

Test(learn_partition, counts) {
  hs_error e = {HS_OK, ""};
  size_t counts[3] = {10, 50, 5};
  hs_learn_part_cfg pc = {HS_LEARN_COUNTS, 3, 0, counts};
  cr_assert_eq(hs_learn_partition(L, &pc, &e), HS_OK, "%s", e.msg);
  check_cover(3, 0);
  for (unsigned p = 0; p < 3; p++) cr_assert_eq(hs_learn_part_size(L, p), counts[p]);
}

Test(learn_partition, bad_input_is_one_line_naming_the_field) {
  hs_error e = {HS_OK, ""};
  hs_learn_part_cfg a0 = {HS_LEARN_DIRICHLET, 4, 0, NULL};
  cr_assert_eq(hs_learn_partition(L, &a0, &e), HS_ERANGE);
  cr_assert_str_eq(e.msg, "partition.alpha: 0; the Dirichlet concentration must be > 0");
  cr_assert_eq(hs_learn_participants(L), 0, "a failed split leaves no partition");
  hs_learn_part_cfg an = {HS_LEARN_DIRICHLET, 4, NAN, NULL};
  cr_assert_eq(hs_learn_partition(L, &an, &e), HS_ERANGE);
  /* tiny alpha over many participants: someone gets nothing */
  hs_learn_part_cfg empty = {HS_LEARN_DIRICHLET, 50, 0.01, NULL};
  cr_assert_eq(hs_learn_partition(L, &empty, &e), HS_ERANGE);
  cr_assert(strstr(e.msg, "leaves participant") && strstr(e.msg, "with no data"), "%s", e.msg);
  cr_assert(!strchr(e.msg, '\n'));
  size_t c0[2] = {10, 0};
  hs_learn_part_cfg zc = {HS_LEARN_COUNTS, 2, 0, c0};
  cr_assert_eq(hs_learn_partition(L, &zc, &e), HS_ERANGE);
  cr_assert_str_eq(e.msg, "partition.counts[1]: 0 leaves participant 1 with no data");
  size_t big[2] = {150, 51};
  hs_learn_part_cfg bc = {HS_LEARN_COUNTS, 2, 0, big};
  cr_assert_eq(hs_learn_partition(L, &bc, &e), HS_ERANGE);
  cr_assert(strstr(e.msg, "add up to 201"), "%s", e.msg);
  hs_learn_part_cfg many = {HS_LEARN_IID, 201, 0, NULL};
  cr_assert_eq(hs_learn_partition(L, &many, &e), HS_ERANGE);
  cr_assert(strstr(e.msg, "partition.participants"), "%s", e.msg);
}

Test(learn_partition, dirichlet_needs_labels) {
  char *csv = NULL;
  hs_learner *l = NULL;
  hs_error e = {HS_OK, ""};
  cr_assert_eq(tl_synth_learner("era5", 100, 1, 1, &csv, &l, &e), HS_OK, "%s", e.msg);
  cr_assert_eq(hs_learn_classes(l), 0);
  hs_learn_part_cfg pc = {HS_LEARN_DIRICHLET, 2, 1.0, NULL};
  cr_assert_eq(hs_learn_partition(l, &pc, &e), HS_EUNSUP);
  cr_assert(strstr(e.msg, "regression"), "%s", e.msg);
  hs_learn_part_cfg iid = {HS_LEARN_IID, 2, 0, NULL};
  cr_assert_eq(hs_learn_partition(l, &iid, &e), HS_OK);
  hs_learn_destroy(l);
  tl_rmrf(csv);
  free(csv);
}

Test(learn_partition, draws_are_seeded_per_participant_and_key) {
  hs_error e = {HS_OK, ""};
  hs_learn_part_cfg pc = {HS_LEARN_IID, 4, 0, NULL};
  cr_assert_eq(hs_learn_partition(L, &pc, &e), HS_OK);
  /* 120 draws from a part of 50: two full passes (each sample twice) + 20. */
  uint32_t a[120], b[120], c[120];
  cr_assert_eq(hs_learn_draw(L, 1, 3, 120, a), 120);
  hs_learn_draw(L, 1, 3, 120, b);
  hs_learn_draw(L, 1, 4, 120, c);
  cr_assert(memcmp(a, b, sizeof a) == 0, "same key, same draws");
  cr_assert(memcmp(a, c, sizeof a) != 0, "another key, other draws");
  const uint32_t *part = hs_learn_part_samples(L, 1);
  size_t m = hs_learn_part_size(L, 1);
  cr_assert_eq(m, 50);
  for (int pass = 0; pass < 2; pass++) {
    unsigned char hit[200] = {0};
    for (int k = 0; k < 50; k++) hit[a[pass * 50 + k]]++;
    for (size_t k = 0; k < m; k++) cr_assert_eq(hit[part[k]], 1, "pass %d: sample %u", pass, part[k]);
  }
  cr_assert_eq(hs_learn_draw(L, 9, 0, 5, a), 0, "no such participant");
}
