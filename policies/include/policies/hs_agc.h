/* [policies/include/policies -> hetsim::policies; installed: include/hetsim/policies/, -lhetsim-policies]
 * hs_agc.h: the planner of approximate gradient coding with quantisation (AGC).
 *
 * A trainer links this as it links the controller: libc + libm only (plus the
 * status/allocation helpers of policies/base, which are libc only).
 *
 * Model (specs/agc.md). k workers, n partitions, g = sum_j g_j. Worker i
 * straggles (its message misses the deadline) with probability p_i in [0,1),
 * independently. It sends m_i = sum_j alpha_ij g_j quantised to z_i bits per
 * coordinate; the master decodes ghat = sum_i I_i w_i Q_{z_i}(m_i).
 *   quantiser variance  omega(z) = D / (2^(z-1) - 1)^2   (infinite for z <= 1)
 *   cost                c_i = (p_i + omega_i) / (1 - p_i)
 *   shares              Y_i = sum_j alpha_ij = n c_i^-1 / sum_j c_j^-1
 *   column sums         sum_i alpha_ij = 1 for every j      (=> E[ghat] = g)
 *   lane-1 weight       w_i  = 1/(1-p_i)                     (unbiased)
 *   lane-2 weight       w'_i = kappa/(1-p_i), kappa = lambda S/(1 + lambda S),
 *                       S = sum c^-1 (MMSE shrink for an adaptive optimiser's
 *                       second moment; lambda = 1 is the exact MMSE scalar)
 *   predicted error     E||ghat - g||^2 = n^2 / S, in units of ||g_bar||^2, the
 *                       squared norm of one partition gradient (all g_j equal,
 *                       or the worst case ||m_i|| <= Y_i max_j ||g_j||).
 *
 * Bits. The allocators share Z_res residual bits, sum_i b_i = Z_res exactly,
 * maximising F(b) = sum_i f_i(b_i) with f_i(b) = (1-p_i)/(D/(2^b-1)^2 + p_i)
 * (f_i(0) = 0): the allocation is optimised for z_i = b_i + 1. The bits a worker
 * transmits are z_i = b_i + offset, and the shares, weights and predicted error
 * are built with omega(z_i). offset = 1 (the DEFAULT) is the paper-consistent
 * model, in which the code and the allocator agree. offset = 2 reproduces the
 * public code, which transmits b_i + 2 while the allocator models b_i + 1
 * (a 2-bit floor per worker); it then reports the error of what is sent.
 * With offset 1 a worker given b_i = 0 is off: omega = inf, c^-1 = 0, Y_i = 0,
 * no partitions, weights 0.
 *
 * Layout. Active workers (c_i^-1 > 0), in index order r = 0..k'-1, hold
 * s_r + 1 partitions where s = (n-k'+1, 1, ..., 1, 0) (k' = 1: s = (n-1)):
 *   shared: partition 0 with coefficient Y_i - s_r, plus s_r partitions of
 *           their own with coefficient 1 (coefficients can be negative);
 *   stair:  s_r + 1 consecutive partitions, consecutive workers sharing one
 *           boundary partition; first 1 (first worker) or 1 - the previous
 *           worker's last, middle 1, last Y_i - the rest.
 * Both have column sums 1 and row sums Y; n + k' - 1 nonzeros; every worker
 * computes at most two partitions when n <= k' (the default n = k with every
 * worker active). Needs n >= k - 1.
 *
 * Ownership: hs_agc_plan_create returns a plan the caller owns and frees with
 * hs_agc_plan_destroy; every array in it belongs to the plan. Errors are an
 * hs_status with a message naming the field, e.g. "p[3]: 1.2 is outside [0,1)"
 * (indices from 0). Everything here is deterministic: no clock, no global
 * state; the quantiser draws only from the stream it is given. */
#ifndef HS_AGC_H
#define HS_AGC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hs_status.h"

/* --- allocators --------------------------------------------------------- */

typedef enum hs_agc_allocator {
  HS_AGC_DP = 0, /* exact dynamic programme, optimal F */
  HS_AGC_LAG,    /* top-k Lagrangian + greedy rounding + equal-split + 1-bit swaps */
  HS_AGC_GREEDY, /* Z_res rounds of +1 bit to the largest marginal gain */
  HS_AGC_EQUAL,  /* floor(Z/k) each, the remainder to the most reliable */
  HS_AGC_NALLOCATORS
} hs_agc_allocator;

/* "dp", "lag", "greedy", "equal"; NULL outside the enum. */
const char *hs_agc_allocator_name(hs_agc_allocator a);
/* By name; HS_EINVAL with "allocator: no allocator \"x\" (dp, lag, greedy, equal)". */
hs_status hs_agc_allocator_lookup(const char *name, hs_agc_allocator *out, hs_error *err);

/* order[0..k-1] = worker indices by p ascending (most reliable first), ties
 * by index: the order equal and lag hand out bits in. */
void hs_agc_reliability_order(const double *p, size_t k, size_t *order);

/* omega(z) = D/(2^(z-1)-1)^2; +inf for z <= 1. */
double hs_agc_omega(double d, int64_t z);
/* f(b) = (1-p)/(D/(2^b-1)^2 + p), 0 for b <= 0. Nondecreasing in b, also as
 * computed in floating point (every operation is monotone). */
double hs_agc_utility(double p, double d, int64_t b);
/* F(b) = sum_i f_i(b_i), summed in index order. */
double hs_agc_objective(const double *p, size_t k, double d, const int64_t *bits);

/* Check p (each in [0,1), finite), d (> 0, finite) and z_res (>= 0, <= 2^31-1),
 * and that F stays finite up to b = z_res + extra for every worker. */
hs_status hs_agc_check_inputs(const double *p, size_t k, double d, int64_t z_res, int64_t extra,
                              hs_error *err);

/* Fill bits[0..k-1] (sum = z_res) with the named allocator. Inputs as checked
 * by hs_agc_check_inputs. The DP refuses tables above 2^26 entries (HS_ERANGE,
 * naming lag as the way out). Deterministic, ties broken towards the smaller
 * index (DP: the smaller share for the later worker; equal/LAG: the more
 * reliable worker, then the smaller index).
 * Costs: dp O(k Z T) time with T = min(Z, saturation point of f_i) <= Z, so
 * O(k Z^2) at worst, O(k Z) memory; lag O(k^2 (log k + I)) for k <= Z with I the
 * root-finding iterations; greedy O(k + Z log k); equal O(k log k). */
hs_status hs_agc_allocate(hs_agc_allocator a, const double *p, size_t k, double d, int64_t z_res,
                          int64_t *bits, hs_error *err);

/* The exact DP with the saturation pruning switched off (prune = false) or on;
 * both return the same bits (tested). For the benchmark and the tests. */
hs_status hs_agc_dp(const double *p, size_t k, double d, int64_t z_res, bool prune, int64_t *bits,
                    hs_error *err);

/* The LAG allocator; when f_by_m is not NULL it receives, for m = 1..min(k,Z),
 * F of the candidate built on the m most reliable workers (the trace of the
 * spec's known answers). f_by_m has min(k, z_res) entries. */
hs_status hs_agc_lag(const double *p, size_t k, double d, int64_t z_res, int64_t *bits,
                     double *f_by_m, hs_error *err);

/* --- the plan ------------------------------------------------------------ */

typedef struct hs_agc_params {
  const double *p;  /* straggler probabilities, k of them, each in [0,1) */
  size_t k;         /* workers, >= 1 */
  double d;         /* quantiser constant D > 0 (theory: dimension/4) */
  int64_t z_res;    /* residual bits to share, >= 1 with offset 1, >= 0 with 2 */
  size_t partitions;/* n >= k-1; 0 means n = k */
  int offset;       /* transmitted bits z_i = b_i + offset: 1 (default) or 2 */
  hs_agc_allocator allocator; /* default HS_AGC_LAG (what training uses) */
  double lambda;    /* lane-2 regulariser > 0, default 1 */
} hs_agc_params;

/* Defaults: partitions 0 (= k), offset 1, allocator lag, lambda 1. */
void hs_agc_params_init(hs_agc_params *pr);

/* A sparse k x n code matrix in compressed rows: worker i holds the partitions
 * col[row[i]..row[i+1]-1] with coefficients coef[...], columns ascending. */
typedef struct hs_agc_layout {
  size_t *row;  /* k + 1 offsets */
  size_t *col;  /* nnz partition indices */
  double *coef; /* nnz coefficients alpha_ij */
  size_t nnz;
} hs_agc_layout;

typedef struct hs_agc_plan {
  size_t k, n;
  int offset;
  hs_agc_allocator allocator;
  double d, lambda;
  int64_t z_res;
  int64_t *bits;        /* b_i, residual bits (sum z_res) */
  int64_t *wire_bits;   /* z_i = b_i + offset, what worker i transmits */
  double *omega;        /* omega(z_i) (inf when z_i <= 1) */
  double *c_inv;        /* c_i^-1 = (1-p_i)/(p_i + omega_i), 0 when off */
  double *shares;       /* Y_i */
  double *weights;      /* lane 1: 1/(1-p_i); 0 for workers that are off */
  double *weights_lane2;/* lane 2: kappa/(1-p_i); 0 for workers that are off */
  size_t active;        /* k' = workers with c_i^-1 > 0 */
  double objective;     /* F(b) in the allocator's model (z = b + 1) */
  double sum_c_inv;     /* S = sum c^-1 with the transmitted bits */
  double kappa;         /* lambda S / (1 + lambda S) */
  double predicted_error; /* n^2 / S, units of ||g_bar||^2 */
  hs_agc_layout shared, stair;
} hs_agc_plan;

/* Validate, allocate bits, build shares, layouts and weights. NULL with *err
 * set on bad input (the message names the field). */
hs_agc_plan *hs_agc_plan_create(const hs_agc_params *pr, hs_error *err);
void hs_agc_plan_destroy(hs_agc_plan *plan);

/* Shares, layouts, weights and the predicted error for given bits (the part of
 * hs_agc_plan_create after the allocator): for a trainer that allocates bits
 * itself, and for a regime that re-plans with new p. Same checks, plus
 * bits[i] >= 0 and sum = z_res. */
hs_agc_plan *hs_agc_plan_from_bits(const hs_agc_params *pr, const int64_t *bits, hs_error *err);

/* The nonnegative ("interval") layout of a plan's shares: the active workers,
 * in index order, take consecutive intervals of length Y_i of [0, n), and
 * alpha_ij is the length of worker i's interval inside [j, j + 1). Column sums
 * 1, row sums Y, every coefficient in (0, 1], at most n + k' - 1 nonzeros, so
 * ||m_i|| <= Y_i max_j ||g_j|| holds; in the shared layout it does not (a
 * coefficient Y_i - s_r < 0 makes an unreliable worker's message as large as
 * two partition gradients when they differ). A worker computes about Y_i + 1
 * partitions, so the reliable ones carry more load. Breakpoints within 1e-9
 * of an integer are snapped to it. The caller frees *out with
 * hs_agc_layout_free. O(n + k). */
void hs_agc_layout_interval(const hs_agc_plan *plan, hs_agc_layout *out);
void hs_agc_layout_free(hs_agc_layout *L);

/* The OSGC baseline (the predecessor scheme, which ignores quantisation):
 * equal bits (z_i = b_i + offset), shares Y_i = n delta_i^-1 / sum delta^-1
 * with delta_i^-1 = (1-p_i)/p_i over the active workers, both layouts from
 * those shares, lane-1 weights 1/(1-p_i); predicted_error is its true error
 * sum_i (p_i + omega_i)/(1-p_i) Y_i^2 (quantisation included). */
hs_agc_plan *hs_agc_plan_osgc(const hs_agc_params *pr, hs_error *err);

/* m_i = sum_j alpha_ij g_j for worker i: grads is n x dim (row j = g_j),
 * out has dim entries. */
void hs_agc_encode(const hs_agc_layout *L, size_t i, const double *grads, size_t dim, double *out);
/* ghat = sum_i arrived_i weight_i msgs_i: msgs is k x dim (rows of workers that
 * did not arrive are not read), weight is plan->weights or ->weights_lane2. */
void hs_agc_decode(const hs_agc_plan *plan, const double *weight, const bool *arrived,
                   const double *msgs, size_t dim, double *out);

/* --- the stochastic quantiser -------------------------------------------- */

/* A small xoshiro256** stream seeded by splitmix64 from (seed, stream): libc
 * only (written when hs_rng pulled GSL; it no longer does, but the quantiser's
 * known answers pin this stream). Open value type: embed it. */
typedef struct hs_agc_rng {
  uint64_t s[4];
} hs_agc_rng;
void hs_agc_rng_init(hs_agc_rng *r, uint64_t seed, uint64_t stream);
uint64_t hs_agc_rng_next(hs_agc_rng *r);
double hs_agc_rng_uniform(hs_agc_rng *r); /* [0,1), 53 bits */

/* Q_z(x) into out (out may be x): s = ||x||; s < 1e-8 gives 0. z >= 2: M =
 * 2^(z-1)-1 levels, |x_c|M/s rounded up with probability its fractional part,
 * out_c = s sign(x_c) level/M (sign(0) = +1). z = 1: out_c = +-s with
 * P(+) = (x_c/s + 1)/2. Unbiased. Draws one uniform per coordinate, in order.
 * Returns s (what travels beside the z*dim bits). z >= 1. */
double hs_agc_quantize(const double *x, size_t dim, int64_t z, hs_agc_rng *r, double *out);
/* Exact E||Q_z(x) - x||^2 = sum_c (s/M)^2 r_c (1 - r_c), r_c = frac(|x_c| M / s)
 * for z >= 2; (dim - 1) s^2 for z = 1. At most omega(z) with D = dim/4 times s^2. */
double hs_agc_quant_variance(const double *x, size_t dim, int64_t z);

#endif
