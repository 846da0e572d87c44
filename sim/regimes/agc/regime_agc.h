/* regime_agc.h (private to sim/): what the three files of the agc regime share.
 *
 *   regime_agc.c        options, descriptor, the timeline of an iteration
 *                       (compute, quantised upload, deadline), outputs
 *   regime_agc_code.c   the codes of the proposed scheme and the baselines
 *                       (layout, decode weights, bits on the wire, predicted
 *                       residual error) and the straggler probabilities
 *                       (given, the spec's model, or from the profiles)
 *   regime_agc_learn.c  learning in the loop: real partition gradients,
 *                       encoded, quantised, masked, decoded, one optimiser step
 *
 * Units: a code's predicted error is E||ghat - g||^2 in units of ||g_bar||^2
 * (all partition gradients equal), the planner's convention (hs_agc.h). */
#ifndef SIM_REGIME_AGC_H
#define SIM_REGIME_AGC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policies/hs_agc.h"
#include "base/hs_status.h"

typedef struct sim_run sim_run;

typedef enum agc_scheme {
  AGC_PROPOSED, /* planner: allocator bits, shares from c_i = (p_i + omega_i)/(1
                   - p_i) */
  AGC_OSGC,     /* equal bits, shares from p_i/(1 - p_i) (ignores quantisation) */
  AGC_SGC,      /* random replication d_j in {0..4}, coefficient 1/((1-p_i) d_j) */
  AGC_BGC,      /* Bernoulli(2/k) support, coefficient 1 */
  AGC_EHD,      /* pairs of workers repeat a block of 2n/k partitions, coefficient 1
                 */
  AGC_ISSGD,    /* one partition each, what arrives is summed */
  AGC_GD,       /* uncoded, full precision (32 bits), the master waits for all */
  AGC_NSCHEMES
} agc_scheme;

typedef struct agc_opts {
  char *scheme;
  char *allocator;
  uint32_t offset;
  uint32_t z_res;
  uint32_t partitions; /* 0: k */
  uint32_t dim;        /* coordinates per message; 0: model_bytes / 4 */
  char *layout;        /* interval (nonnegative, default), shared (the public
                          code's; NULL in a hand-made agc_opts means shared) */
  char *d_rule;        /* theory (dim/4), tuned (the public code's), given,
                          measured (the quantiser's variance on the gradients) */
  double d;
  char *p_rule; /* profile, model, given */
  double *p;    /* given: k values (one number in the file fills all) */
  size_t np;
  double z_th;         /* deadline over the nominal iteration (model: exp(-mu (z_th-1))) */
  double deadline_s;   /* 0: z_th x the slowest nominal arrival */
  uint32_t first_k;    /* 0: decode at the deadline; K: at the K-th arrival (or the
                          deadline) */
  uint32_t reestimate; /* re-estimate p and re-plan every this many iterations;
                          0: never */
  double prior_weight; /* iterations the initial p_i counts for in the
                          re-estimate */
  double p_min, p_max; /* estimates (profile, re-estimate) are clamped to
                          [p_min, p_max] */
  double lambda;       /* lane-2 regulariser */
  char *learn;         /* none, mnist */
  char *optimizer;     /* sgd, adam2 */
  double lr;
  uint32_t eval_every;
  uint32_t eval_samples;
  double target_loss;   /* 0: none */
  uint32_t threads;     /* learner threads (results do not depend on it) */
  uint32_t max_samples; /* training images loaded (0: the learner's default) */
} agc_opts;

/* A code: who computes what, how it is decoded and what travels. */
typedef struct agc_code {
  agc_scheme scheme;
  size_t k, n;
  hs_agc_layout L;  /* owned: row[k+1], col/coef[nnz] */
  double *w, *w2;   /* decode weights: lane 1, lane 2 (Adam's second moment) */
  int64_t *z;       /* bits per coordinate on the wire; 0: the worker sends nothing */
  double *omega;    /* omega(z_i) (0 at full precision) */
  bool quantise;    /* false: full precision (GD) */
  bool wait_all;    /* true: no deadline (GD) */
  double predicted; /* E||ghat - g||^2 / ||g_bar||^2 */
} agc_code;

/* The option's words, in enum order, NULL-terminated. */
extern const char *const agc_scheme_names[AGC_NSCHEMES + 1];
agc_scheme agc_scheme_of(const char *name);

/* The code of scheme s for straggler probabilities p (k), n partitions. SGC
 * and BGC draw their support from (seed). Bad input: the planner's message. */
hs_status agc_code_build(agc_code *c, agc_scheme s, const agc_opts *o, const double *p, size_t k,
                         size_t n, double d, uint64_t seed, hs_error *err);
void agc_code_free(agc_code *c);
/* E||ghat - g||^2 / ||g_bar||^2 for independent stragglers, g_j = g_bar:
 * (sum (1-p_i) w_i Y_i - n)^2 + sum (1-p_i)(p_i + omega_i) w_i^2 Y_i^2. */
double agc_code_predicted(const agc_code *c, const double *p);

/* The exact residual error given the partition gradients g[0..n) (dim each;
 * NULL: an empty partition, left out of g), over independent stragglers at
 * the planned p and the quantiser: E||ghat - g||^2 = bias + straggle + quant,
 *   bias      ||sum_i (1-p_i) w_i m_i - g||^2   (0 for proposed and osgc)
 *   straggle  sum_i (1-p_i) p_i w_i^2 ||m_i||^2
 *   quant     sum_i (1-p_i) w_i^2 V(m_i), V the exact variance at z_i
 *             (hs_agc_quant_variance)
 * and quant_model, the planner's model of quant: V(m_i) = omega_i ||m_i||^2.
 * With every g_j equal to g_bar, bias + straggle + quant_model is
 * agc_code_predicted x ||g_bar||^2. wait_all codes arrive with probability 1.
 * Scratch msg and mean hold dim doubles. O(nnz x dim). */
typedef struct agc_residual {
  double bias, straggle, quant, quant_model;
} agc_residual;
void agc_code_expected(const agc_code *c, const double *p, const double *const *g, size_t dim,
                       double *msg, double *mean, agc_residual *out);
/* m_i = sum_j alpha_ij g_j into msg (dim). */
void agc_code_message(const agc_code *c, size_t i, const double *const *g, size_t dim,
                      double *msg);
/* ghat = sum_i arrived_i w_i Q(m_i) (and ghat2 with the lane-2 weights when not
 * NULL); the quantiser of worker i draws from the stream (seed, iter << 24 ^ i)
 * (unique for k < 2^24). msg is scratch (dim). */
void agc_code_decode(const agc_code *c, const double *const *g, size_t dim, const bool *arrived,
                     uint64_t seed, uint32_t iter, double *msg, double *ghat, double *ghat2);

/* The same relative variance V(x) / ||x||^2 at z bits on a standard normal
 * vector of dim coordinates from the stream (seed, purpose "agc-D"): the
 * stand-in for dense gradients when no learner computes real ones. O(dim). */
double agc_omega_gaussian(size_t dim, int64_t z, uint64_t seed);

/* Straggler probabilities from the device profiles against the deadline:
 * P(compute of samples[i] + upload of bits[i] > deadline_s), clamped to
 * [p_min, p_max] (every device is estimated, with the load it is given).
 * Compute: lognormal profile time stretched by the speed trace from now;
 * upload: latency + bits / min(access, server / senders). */
void agc_p_from_profiles(sim_run *r, const uint64_t *samples, const double *bits, double deadline_s,
                         double p_min, double p_max, double *p);
/* model_load: P(lag_i > deadline_s - nominal arrival of samples[i] and
 * bits[i], uploaded alone) for the model's lag unit_s * Exp(1) / mu_i, i.e.
 * exp(-mu_i slack / unit_s) (1 without slack), clamped to [p_min, p_max]. The
 * profile's compute noise is left out (the lag dominates it). */
void agc_p_model_load(sim_run *r, const uint64_t *samples, const double *bits, const double *mu,
                      double unit_s, double deadline_s, double p_min, double p_max, double *p);
/* The same with first_k > 0: P(not among the first first_k arrivals of the
 * workers flagged in sends, or after the deadline), by Monte Carlo over the
 * profiles (streams keyed by seed and device; deterministic). */
void agc_p_first_k(sim_run *r, const uint64_t *samples, const double *bits, const bool *sends,
                   double deadline_s, size_t first_k, uint64_t seed, double p_min, double p_max,
                   double *p);
/* Nominal (mean) arrival time of device i: compute of `samples` at its mean
 * speed from now, plus the upload of `bits` at its share of the server link
 * among `senders` concurrent uploads. */
double agc_nominal_arrival(sim_run *r, size_t i, uint64_t samples, double bits, size_t senders);

/* --- learning in the loop (regime_agc_learn.c) ---------------------------- */

typedef struct agc_learn agc_learn;

typedef struct agc_learn_out {
  double measured;            /* ||ghat - g||^2 */
  agc_residual expected;      /* its expectation given this iteration's g_j */
  double gbar_sq;             /* mean_j ||g_j||^2 */
  double train_loss;          /* mean over partitions of the batch losses */
  double eval_loss, eval_acc; /* NAN when not evaluated this iteration */
} agc_learn_out;

hs_status agc_learn_create(const agc_opts *o, uint64_t seed, size_t n, const uint64_t *per_part,
                           agc_learn **out, hs_error *err);
void agc_learn_destroy(agc_learn *l);
/* The quantiser's relative variance at z bits, mean_j V(g_j) / ||g_j||^2, on
 * the partition gradients at the current model with iteration 0's draws (what
 * iteration 0 computes; no state changes). 0 when every gradient is 0. */
double agc_learn_omega(agc_learn *l, int64_t z);
size_t agc_learn_nparams(const agc_learn *l);
/* One iteration: partition gradients at the current model, worker messages
 * (encoded, quantised with streams keyed by (seed, iteration, worker)),
 * the decode of the arrived ones, one optimiser step. */
void agc_learn_iterate(agc_learn *l, const agc_code *c, const double *p, const bool *arrived,
                       uint32_t iter, bool evaluate, agc_learn_out *out);

#endif
