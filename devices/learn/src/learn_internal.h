/* learn_internal.h: what the learner's own files (rng.c, optim.c,
 * partition.c, learner.c) share; not installed, not for the harness. */
#ifndef LEARN_INTERNAL_H
#define LEARN_INTERNAL_H

#include "learn/hs_learn.h"
#include "learn/hs_learn_parts.h"

/* ------------------------------------------------------------ rng (rng.c) */
/* xoshiro256** seeded from a key through splitmix64. */
typedef struct lrn_rng {
  uint64_t s[4];
} lrn_rng;
/* Purposes of the streams: a new purpose is a new constant, never a reuse. */
enum { LRN_PURPOSE_IID = 1, LRN_PURPOSE_DIRICHLET = 2, LRN_PURPOSE_CLASS_SHUFFLE = 3,
       LRN_PURPOSE_COUNTS = 4, LRN_PURPOSE_DRAW = 5 };
void lrn_rng_key(lrn_rng *r, uint64_t seed, uint64_t entity, uint64_t purpose, uint64_t draw);
uint64_t lrn_rng_next(lrn_rng *r);
double lrn_rng_u01(lrn_rng *r);                   /* [0, 1), 53 bits */
size_t lrn_rng_below(lrn_rng *r, size_t n);       /* [0, n), n >= 1 */
double lrn_rng_normal(lrn_rng *r);                /* N(0, 1) */
/* log of a Gamma(shape, 1) variate (shape > 0): in log form so that shapes
 * far below 1 (alpha = 0.01) do not underflow to 0. */
double lrn_rng_log_gamma(lrn_rng *r, double shape);
void lrn_shuffle_u32(lrn_rng *r, uint32_t *a, size_t n);

/* --------------------------------------------------- optimiser (optim.c) */
struct hs_learn_optstate {
  hs_learn_opt o;        /* defaults resolved */
  size_t n;
  uint64_t t;            /* steps taken */
  double *m, *v;         /* MOMENTUM: m = velocity; ADAM: m, v moments */
};
/* Defaults resolved (lr 0 -> task_lr). */
void lrn_opt_resolve(hs_learn_opt *o, double task_lr);
/* One step on params p[i] for i in the index ranges given (rows of row_dim
 * starting at 0 listed in rows, plus [dense0, n)), gradient g[i] / div;
 * with zero, each g[i] used is set to 0 (saves the caller a pass).
 * SGD touches only those; MOMENTUM and ADAM update every parameter (their
 * state moves even where this step's gradient is zero). */
void lrn_opt_step(hs_learn_optstate *s, float *p, double *g, double div, const lrn_rows *rows, size_t row_dim,
                  size_t dense0, bool zero);

/* ---------------------------------------------------------- partition.c */
typedef struct lrn_partition {
  unsigned P;
  size_t *size;
  uint32_t **idx;
} lrn_partition;
/* labels: class of each of the n training samples (NULL for regression). */
hs_status lrn_partition_make(const hs_learn_part_cfg *pc, uint64_t seed, size_t n, const int *labels,
                             int classes, lrn_partition *out, hs_error *err);
void lrn_partition_fini(lrn_partition *p);

#endif
