/* partition.c: splitting the training set across P participants.
 *
 *   IID        one shuffle of 0..n-1 (stream: seed, 0, IID), cut into P parts
 *              of n*p/P .. n*(p+1)/P: sizes differ by at most one;
 *   DIRICHLET  per class c, in class order: log-Gamma(alpha) variates for the
 *              P participants (stream: seed, c, DIRICHLET) normalised to q,
 *              the class's samples (ascending) shuffled (seed, c,
 *              CLASS_SHUFFLE) and cut at floor(n_c * (q_0 + .. + q_p)), the
 *              last cut at n_c; the usual label-skew split of the FL
 *              literature (Hsu et al. 2019), small alpha = strong skew;
 *   COUNTS     one shuffle (seed, 0, COUNTS) cut into parts of the given sizes.
 * Invariants: a sample is in at most one part (IID, DIRICHLET: exactly one);
 * each part is sorted ascending; no part is empty (an empty one is an error
 * naming the participant, since a device with no data cannot train).
 * Cost O(n + classes * P). Rejected: re-drawing until no part is empty (hides
 * the skew the user asked for, and the loop may not end for tiny alpha). */
#include "learn_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

void lrn_partition_fini(lrn_partition *p) {
  for (unsigned i = 0; i < p->P && p->idx; i++) free(p->idx[i]);
  free(p->idx);
  free(p->size);
  memset(p, 0, sizeof *p);
}

/* Parts from one permutation cut at the given sizes. */
static void part_cut(lrn_partition *out, const uint32_t *perm) {
  size_t off = 0;
  for (unsigned p = 0; p < out->P; p++) {
    out->idx[p] = hs_malloc((out->size[p] ? out->size[p] : 1) * sizeof **out->idx);
    memcpy(out->idx[p], perm + off, out->size[p] * sizeof **out->idx);
    off += out->size[p];
  }
}

static hs_status part_dirichlet(const hs_learn_part_cfg *pc, uint64_t seed, size_t n, const int *labels,
                                int classes, lrn_partition *out) {
  unsigned P = out->P;
  size_t *nc = hs_calloc((size_t)classes, sizeof *nc), *fill = hs_calloc(P, sizeof *fill);
  for (size_t i = 0; i < n; i++) nc[labels[i]]++;
  /* cut[c * (P + 1) + p]: where participant p's share of class c starts. */
  size_t *cut = hs_malloc((size_t)classes * (P + 1) * sizeof *cut);
  double *lg = hs_malloc(P * sizeof *lg);
  for (int c = 0; c < classes; c++) {
    lrn_rng r;
    lrn_rng_key(&r, seed, (uint64_t)c, LRN_PURPOSE_DIRICHLET, 0);
    double mx = -INFINITY, z = 0, acc = 0;
    for (unsigned p = 0; p < P; p++) {
      lg[p] = lrn_rng_log_gamma(&r, pc->alpha);
      if (lg[p] > mx) mx = lg[p];
    }
    for (unsigned p = 0; p < P; p++) z += exp(lg[p] - mx);
    size_t *cc = cut + (size_t)c * (P + 1);
    cc[0] = 0;
    for (unsigned p = 0; p < P; p++) {
      acc += exp(lg[p] - mx) / z;
      size_t k = p + 1 == P ? nc[c] : (size_t)floor((double)nc[c] * acc);
      if (k > nc[c]) k = nc[c];
      if (k < cc[p]) k = cc[p];
      cc[p + 1] = k;
      out->size[p] += cc[p + 1] - cc[p];
    }
  }
  for (unsigned p = 0; p < P; p++) out->idx[p] = hs_malloc((out->size[p] ? out->size[p] : 1) * sizeof **out->idx);
  uint32_t *cls = hs_malloc((n ? n : 1) * sizeof *cls);
  for (int c = 0; c < classes; c++) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
      if (labels[i] == c) cls[m++] = (uint32_t)i;
    lrn_rng r;
    lrn_rng_key(&r, seed, (uint64_t)c, LRN_PURPOSE_CLASS_SHUFFLE, 0);
    lrn_shuffle_u32(&r, cls, m);
    const size_t *cc = cut + (size_t)c * (P + 1);
    for (unsigned p = 0; p < P; p++)
      for (size_t k = cc[p]; k < cc[p + 1]; k++) out->idx[p][fill[p]++] = cls[k];
  }
  free(cls);
  free(lg);
  free(cut);
  free(fill);
  free(nc);
  return HS_OK;
}

hs_status lrn_partition_make(const hs_learn_part_cfg *pc, uint64_t seed, size_t n, const int *labels,
                             int classes, lrn_partition *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  unsigned P = pc->participants;
  if (P < 1) return hs_error_set(err, HS_ERANGE, "partition.participants: 0; need at least 1");
  if (P > n)
    return hs_error_set(err, HS_ERANGE, "partition.participants: %u participants for %zu training samples", P, n);
  if (pc->kind == HS_LEARN_DIRICHLET) {
    if (!(pc->alpha > 0) || !isfinite(pc->alpha))
      return hs_error_set(err, HS_ERANGE, "partition.alpha: %g; the Dirichlet concentration must be > 0",
                          pc->alpha);
    if (!labels || classes < 1)
      return hs_error_set(err, HS_EUNSUP,
                          "partition.kind: dirichlet splits by class label; this task is a regression (use iid "
                          "or counts)");
  } else if (pc->kind == HS_LEARN_COUNTS) {
    if (!pc->counts) return hs_error_set(err, HS_EMISSING, "partition.counts: missing (one count per participant)");
    size_t sum = 0;
    for (unsigned p = 0; p < P; p++) {
      if (pc->counts[p] == 0)
        return hs_error_set(err, HS_ERANGE, "partition.counts[%u]: 0 leaves participant %u with no data", p, p);
      sum += pc->counts[p];
    }
    if (sum > n)
      return hs_error_set(err, HS_ERANGE, "partition.counts: they add up to %zu; the training set has %zu samples",
                          sum, n);
  } else if (pc->kind != HS_LEARN_IID) {
    return hs_error_set(err, HS_EINVAL, "partition.kind: %d is not iid, dirichlet or counts", (int)pc->kind);
  }
  out->P = P;
  out->size = hs_calloc(P, sizeof *out->size);
  out->idx = hs_calloc(P, sizeof *out->idx);
  if (pc->kind == HS_LEARN_DIRICHLET) {
    part_dirichlet(pc, seed, n, labels, classes, out);
  } else {
    uint32_t *perm = hs_malloc(n * sizeof *perm);
    for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    lrn_rng r;
    lrn_rng_key(&r, seed, 0, pc->kind == HS_LEARN_IID ? LRN_PURPOSE_IID : LRN_PURPOSE_COUNTS, 0);
    lrn_shuffle_u32(&r, perm, n);
    for (unsigned p = 0; p < P; p++)
      out->size[p] = pc->kind == HS_LEARN_IID ? n * (p + 1) / P - n * p / P : pc->counts[p];
    part_cut(out, perm);
    free(perm);
  }
  for (unsigned p = 0; p < P; p++) {
    if (out->size[p] == 0) {
      hs_status st = hs_error_set(err, HS_ERANGE,
                                  "partition.alpha: dirichlet alpha %g over %u participants leaves participant %u "
                                  "with no data (seed %llu); raise alpha or use fewer participants",
                                  pc->alpha, P, p, (unsigned long long)seed);
      lrn_partition_fini(out);
      return st;
    }
    qsort(out->idx[p], out->size[p], sizeof **out->idx, cmp_u32);
  }
  return HS_OK;
}
