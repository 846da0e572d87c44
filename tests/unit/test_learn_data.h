/* test_learn_data.h: small data sets in the real layouts for the learner's
 * tests (static helpers, included by test_learn*.c only).
 *   tl_mnist(dir, n, side, t10k): IDX files (plain, not gzip) of n images of
 *   side x side pixels, label i % 10, pixels a class-dependent pattern plus a
 *   per-image hash (learnable, not trivially), and t10k files of n/4 images
 *   when t10k is set. Returns the folder (heap), NULL on a write error. */
#ifndef TEST_LEARN_DATA_H
#define TEST_LEARN_DATA_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "learn/hs_learn.h"
#include "learn/hs_learn_parts.h"

static void tl_be32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

static int tl_write(const char *dir, const char *name, const unsigned char *b, size_t n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  int ok = fwrite(b, 1, n, f) == n;
  return (fclose(f) == 0) && ok;
}

static int tl_idx_pair(const char *dir, const char *img, const char *lab, uint32_t n, uint32_t side,
                       uint32_t salt) {
  size_t isz = 16 + (size_t)n * side * side, lsz = 8 + n;
  unsigned char *a = malloc(isz), *b = malloc(lsz);
  tl_be32(a, 0x803);
  tl_be32(a + 4, n);
  tl_be32(a + 8, side);
  tl_be32(a + 12, side);
  tl_be32(b, 0x801);
  tl_be32(b + 4, n);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t c = i % 10;
    b[8 + i] = (unsigned char)c;
    for (uint32_t k = 0; k < side * side; k++) {
      uint32_t h = (i + salt) * 2654435761u ^ k * 40503u;
      h ^= h >> 13;
      unsigned v = (k % 10 == c) ? 200u + (h % 56u) : ((h % 7u) == 0 ? 0u : h % 90u);
      a[16 + (size_t)i * side * side + k] = (unsigned char)v;
    }
  }
  int ok = tl_write(dir, img, a, isz) && tl_write(dir, lab, b, lsz);
  free(a);
  free(b);
  return ok;
}

static char *tl_mnist(uint32_t n, uint32_t side, int t10k) {
  char *dir = strdup("/tmp/hs_learn_test_XXXXXX");
  if (!mkdtemp(dir)) {
    free(dir);
    return NULL;
  }
  int ok = tl_idx_pair(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", n, side, 0);
  if (ok && t10k) ok = tl_idx_pair(dir, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", n / 4, side, 7777);
  if (!ok) {
    free(dir);
    return NULL;
  }
  return dir;
}

static void tl_rmrf(const char *dir) {
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
}

/* A learner on a tl_mnist folder; aborts the test on failure via the caller. */
static hs_status tl_learner(const char *dir, hs_learn_opt_kind opt, double lr, size_t batch, unsigned threads,
                            hs_learner **l, hs_error *e) {
  hs_learn_cfg c = {"mnist", dir, 0, 0, 5, batch, {opt, lr, 0, 0, 0, 0, 0, 0}, threads, HS_LEARN_LAST_KEEP};
  return hs_learn_create(&c, l, e);
}

/* A temporary folder with synthetic data for `task` (imdb: DIR/aclImdb of
 * `n` reviews; era5: DIR/era5.csv of `n` rows) and a learner on it (batch 4,
 * SGD at the task's rate). *dir is the folder to remove (heap). */
static hs_status tl_synth_learner(const char *task, size_t n, uint64_t seed, unsigned threads, char **dir,
                                  hs_learner **l, hs_error *e) {
  *dir = strdup("/tmp/hs_learn_synth_XXXXXX");
  *l = NULL;
  if (!mkdtemp(*dir)) return hs_error_set(e, HS_EIO, "cannot make a temporary folder");
  char data[512];
  int imdb = strcmp(task, "imdb") == 0;
  snprintf(data, sizeof data, "%s/%s", *dir, imdb ? "aclImdb" : "era5.csv");
  hs_status st = imdb ? lrn_synth_imdb(data, n, seed, e) : lrn_synth_era5(data, n, seed, e);
  if (st != HS_OK) return st;
  hs_learn_cfg c = {task, data, 0, 0, 3, 4, {HS_LEARN_SGD, 0, 0, 0, 0, 0, 0, 0}, threads, HS_LEARN_LAST_KEEP};
  return hs_learn_create(&c, l, e);
}

#endif
