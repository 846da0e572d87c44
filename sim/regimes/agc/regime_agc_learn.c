/* regime_agc_learn.c: learning in the loop for the agc regime. The decoded
 * gradient is the real coded, quantised, straggler-masked combination of
 * real partition gradients (hetsim::learn, the Fashion-MNIST MLP).
 *
 * Per iteration t:
 *   g_j   = mean batch gradient of part_samples[j] samples of partition j
 *           (IID split of the training set into n parts; draw key t), at the
 *           current model; g = sum_j g_j (the spec's convention)
 *   m_i   = sum_j alpha_ij g_j, for the workers whose message arrived
 *   Q(m_i) the spec's seeded stochastic quantiser (hs_agc_quantize) at z_i
 *           bits, stream (seed, t << 24 ^ i) (unique for k < 2^24); none for gd
 *   ghat  = sum_i w_i Q(m_i), ghat' = sum_i w'_i Q(m_i) (lane 2)
 *   step  on ghat / n (the mean over partitions): SGD (hetsim::learn's), or
 *         the two-lane Adam of spec section 5: m from ghat, v from ghat'^2.
 * Measured residual error ||ghat - g||^2; gbar_sq = mean_j ||g_j||^2 puts it
 * in the predicted error's unit. Only arrived messages are quantised (the
 * decode is agc_code_decode): a straggler's message is never read, so its
 * quantiser draws do not matter. Beside the draw, the exact expectation of
 * the error given this iteration's gradients (agc_code_expected: every
 * worker's message, O(nnz x nparams) more) separates what the planner's
 * model leaves out from the luck of the draw. agc_learn_omega: the
 * quantiser's relative variance on the initial partition gradients, for
 * d_rule measured.
 *
 * Deterministic whatever `threads` is: the learner computes each partition's
 * gradient on one thread and everything here runs on the caller's thread in
 * index order. Cost per iteration: the n batch gradients (the learner) plus
 * O(nnz x nparams) encoding and O(k' x nparams) quantising. Rejected: the
 * public code's per (worker, partition, minibatch) quantisation; the planner's
 * error model is per message, so the message is what is quantised. */
#include <math.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "learn/hs_learn.h"
#include "regime_agc.h"

struct agc_learn {
  hs_learner *l;
  size_t n, np;
  uint64_t seed;
  size_t *per;       /* samples of each partition per iteration */
  uint32_t **idx;    /* n draws */
  hs_learn_grad **g; /* n partition gradients */
  double *loss;
  const uint32_t **ix; /* scratch for the ranks with samples */
  size_t *nn;
  hs_learn_grad **gg;
  float *params;
  double *msg, *ghat, *ghat2, *gtrue, *mean;
  const double **gp; /* n partition gradients (NULL: empty partition) */
  bool adam2;
  double lr, b1, b2, eps;
  double *m, *v;
  uint64_t t;
  hs_learn_optstate *sgd;
  size_t eval_samples;
};

size_t agc_learn_nparams(const agc_learn *l) { return l->np; }

void agc_learn_destroy(agc_learn *L) {
  if (!L) return;
  for (size_t j = 0; j < L->n; j++) {
    if (L->idx) hs_free(L->idx[j]);
    if (L->g) hs_learn_grad_destroy(L->g[j]);
  }
  hs_free(L->idx);
  hs_free(L->g);
  hs_free(L->per);
  hs_free(L->loss);
  hs_free(L->ix);
  hs_free(L->nn);
  hs_free(L->gg);
  hs_free(L->params);
  hs_free(L->msg);
  hs_free(L->ghat);
  hs_free(L->ghat2);
  hs_free(L->gtrue);
  hs_free(L->mean);
  hs_free(L->gp);
  hs_free(L->m);
  hs_free(L->v);
  if (L->sgd) hs_learn_optstate_destroy(L->sgd);
  hs_learn_destroy(L->l);
  hs_free(L);
}

hs_status agc_learn_create(const agc_opts *o, uint64_t seed, size_t n, const uint64_t *per_part,
                           agc_learn **out, hs_error *err) {
  *out = NULL;
  hs_learn_cfg cfg = {.task = o->learn,
                      .seed = seed,
                      .batch = 32,
                      .opt = {.kind = HS_LEARN_SGD, .lr = o->lr},
                      .threads = o->threads,
                      .max_samples = o->max_samples};
  agc_learn *L = hs_calloc(1, sizeof *L);
  hs_status st = hs_learn_create(&cfg, &L->l, err);
  if (st != HS_OK) {
    hs_free(L);
    return st;
  }
  if (n > hs_learn_train_count(L->l)) {
    agc_learn_destroy(L);
    return hs_error_set(err, HS_EINVAL,
                        "partitions: %zu partitions of %zu training samples leave some empty", n,
                        hs_learn_train_count(L->l));
  }
  hs_learn_part_cfg pc = {HS_LEARN_IID, (unsigned)n, 0, NULL};
  if ((st = hs_learn_partition(L->l, &pc, err)) != HS_OK) {
    agc_learn_destroy(L);
    return st;
  }
  L->n = n;
  L->np = hs_learn_nparams(L->l);
  L->seed = seed;
  L->per = hs_malloc(n * sizeof *L->per);
  L->idx = hs_calloc(n, sizeof *L->idx);
  L->g = hs_calloc(n, sizeof *L->g);
  L->loss = hs_calloc(n, sizeof *L->loss);
  L->ix = hs_calloc(n, sizeof *L->ix);
  L->nn = hs_calloc(n, sizeof *L->nn);
  L->gg = hs_calloc(n, sizeof *L->gg);
  for (size_t j = 0; j < n; j++) {
    L->per[j] = per_part[j];
    L->idx[j] = hs_malloc((per_part[j] ? per_part[j] : 1) * sizeof **L->idx);
    L->g[j] = hs_learn_grad_create(L->l);
  }
  L->params = hs_malloc(L->np * sizeof *L->params);
  hs_learn_init_params(L->l, L->params);
  L->msg = hs_malloc(L->np * sizeof *L->msg);
  L->ghat = hs_malloc(L->np * sizeof *L->ghat);
  L->ghat2 = hs_malloc(L->np * sizeof *L->ghat2);
  L->gtrue = hs_malloc(L->np * sizeof *L->gtrue);
  L->mean = hs_malloc(L->np * sizeof *L->mean);
  L->gp = hs_calloc(n, sizeof *L->gp);
  L->adam2 = !strcmp(o->optimizer, "adam2");
  L->lr = o->lr;
  L->b1 = 0.9;
  L->b2 = 0.999;
  L->eps = 1e-8;
  if (L->adam2) {
    L->m = hs_calloc(L->np, sizeof *L->m);
    L->v = hs_calloc(L->np, sizeof *L->v);
  } else {
    hs_learn_opt so = {.kind = HS_LEARN_SGD, .lr = o->lr};
    L->sgd = hs_learn_optstate_create(&so, L->np);
  }
  L->eval_samples = o->eval_samples;
  *out = L;
  return HS_OK;
}

static void adam2_step(agc_learn *L, double scale) {
  L->t++;
  double c1 = 1.0 - pow(L->b1, (double)L->t), c2 = 1.0 - pow(L->b2, (double)L->t);
  for (size_t q = 0; q < L->np; q++) {
    double g1 = L->ghat[q] * scale, g2 = L->ghat2[q] * scale;
    L->m[q] = L->b1 * L->m[q] + (1.0 - L->b1) * g1;
    L->v[q] = L->b2 * L->v[q] + (1.0 - L->b2) * g2 * g2;
    double step = L->lr * (L->m[q] / c1) / (sqrt(L->v[q] / c2) + L->eps);
    L->params[q] = (float)((double)L->params[q] - step);
  }
}

/* The partition gradients at the current model for the draws of iteration
 * `iter` into L->g, their batch losses into L->loss; L->gp points at them
 * (NULL for an empty partition). Returns the ranks computed. */
static size_t partition_grads(agc_learn *L, uint32_t iter) {
  size_t ranks = 0;
  for (size_t j = 0; j < L->n; j++) {
    L->gp[j] = NULL;
    if (!L->per[j]) continue;
    hs_learn_draw(L->l, (unsigned)j, iter, L->per[j], L->idx[j]);
    L->ix[ranks] = L->idx[j];
    L->nn[ranks] = L->per[j];
    L->gg[ranks++] = L->g[j];
  }
  hs_learn_batch_grad_many(L->l, L->params, L->ix, L->nn, L->gg, L->loss, ranks);
  for (size_t j = 0; j < L->n; j++)
    if (L->per[j]) L->gp[j] = hs_learn_grad_values(L->g[j]);
  return ranks;
}

double agc_learn_omega(agc_learn *L, int64_t z) {
  partition_grads(L, 0);
  double sum = 0.0;
  size_t cnt = 0;
  for (size_t j = 0; j < L->n; j++) {
    if (!L->gp[j]) continue;
    double sq = 0.0;
    for (size_t q = 0; q < L->np; q++) sq += L->gp[j][q] * L->gp[j][q];
    if (!(sq > 0.0)) continue;
    sum += hs_agc_quant_variance(L->gp[j], L->np, z) / sq;
    cnt++;
  }
  return cnt ? sum / (double)cnt : 0.0;
}

void agc_learn_iterate(agc_learn *L, const agc_code *c, const double *p, const bool *arrived,
                       uint32_t iter, bool evaluate, agc_learn_out *out) {
  size_t np = L->np, ranks = partition_grads(L, iter);
  double *ls = L->loss;
  double loss = 0, gsq = 0;
  memset(L->gtrue, 0, np * sizeof *L->gtrue);
  for (size_t r = 0; r < ranks; r++) loss += ls[r] / (double)ranks;
  for (size_t j = 0; j < L->n; j++) {
    if (!L->per[j]) continue;
    const double *gj = hs_learn_grad_values(L->g[j]);
    double sq = 0;
    for (size_t q = 0; q < np; q++) {
      L->gtrue[q] += gj[q];
      sq += gj[q] * gj[q];
    }
    gsq += sq / (double)L->n;
  }
  agc_code_decode(c, L->gp, np, arrived, L->seed, iter, L->msg, L->ghat, L->ghat2);
  agc_code_expected(c, p, L->gp, np, L->msg, L->mean, &out->expected);
  double err2 = 0;
  for (size_t q = 0; q < np; q++) {
    double e = L->ghat[q] - L->gtrue[q];
    err2 += e * e;
  }
  double scale = 1.0 / (double)L->n;
  if (L->adam2)
    adam2_step(L, scale);
  else {
    for (size_t q = 0; q < np; q++) L->msg[q] = L->ghat[q] * scale;
    hs_learn_opt_apply(L->sgd, L->params, L->msg, np);
  }
  out->measured = err2;
  out->gbar_sq = gsq;
  out->train_loss = loss;
  out->eval_loss = out->eval_acc = NAN;
  if (evaluate) hs_learn_eval(L->l, L->params, L->eval_samples, &out->eval_loss, &out->eval_acc);
}
