/* agc_plan.c: the AGC plan: checks, shares Y, the two integer code layouts,
 * the decode weights of both lanes and the predicted residual error; encode
 * and decode helpers a trainer or a regime applies the plan with.
 *
 * Given bits b (from an allocator or the caller), z_i = b_i + offset,
 * c_i^-1 = (1-p_i)/(p_i + omega(z_i)) (0 when z_i <= 1: the worker is off),
 * S = sum c^-1, Y_i = n c_i^-1 / S, error n^2 / S, lane-1 weight 1/(1-p_i),
 * lane-2 weight kappa/(1-p_i) with kappa = 1/(1 + 1/(lambda S)) (the same as
 * lambda S/(1 + lambda S), without overflow when S is huge).
 *
 * Layouts (hs_agc.h has the picture): shared and stair in the plan, and the
 * nonnegative interval layout on request (hs_agc_layout_interval: the shares
 * laid end to end over [0, n), so ||m_i|| <= Y_i max ||g_j|| holds, which
 * the planner's error model needs when partition gradients differ; the
 * shared layout's negative coefficients break it). Compressed rows,
 * n + k' - 1 nonzeros, O(k + n) time and memory. Invariants, tested: column
 * sums 1 and row sums Y (to rounding), columns ascending in each row, and the
 * rows of workers that are off are empty. Rejected: a dense k x n matrix (10^8 doubles at
 * k = n = 10^4 for n + k - 1 nonzeros), and spreading the n - k' + 1 extra
 * partitions over all workers instead of giving them to the first (it keeps
 * everyone at <= 2 only when n <= 2k'-1 and departs from the public layout;
 * the error does not depend on it: only the row sums matter). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "policies/hs_agc.h"
#include "base/hs_alloc.h"

#define PARTITIONS_MAX ((size_t)1 << 31)

void hs_agc_params_init(hs_agc_params *pr) {
  memset(pr, 0, sizeof *pr);
  pr->offset = 1;
  pr->allocator = HS_AGC_LAG;
  pr->lambda = 1.0;
}

static hs_status check_params(const hs_agc_params *pr, size_t *n, hs_error *err) {
  if (!pr->p || pr->k == 0) return hs_error_set(err, HS_EINVAL, "p: no workers (give at least one p_i)");
  if (pr->offset != 1 && pr->offset != 2)
    return hs_error_set(err, HS_ERANGE, "offset: %d must be 1 (paper-consistent) or 2 (as the public code)",
                        pr->offset);
  hs_status st = hs_agc_check_inputs(pr->p, pr->k, pr->d, pr->z_res, pr->offset - 1, err);
  if (st != HS_OK) return st;
  if (pr->offset == 1 && pr->z_res < 1)
    return hs_error_set(err, HS_ERANGE,
                        "z_res: %lld is below 1, the least the layout needs with offset 1 (with no "
                        "residual bit every worker is off: 1 bit, infinite quantiser variance)",
                        (long long)pr->z_res);
  if (!(pr->lambda > 0.0) || !isfinite(pr->lambda))
    return hs_error_set(err, HS_ERANGE, "lambda: %g must be > 0 and finite", pr->lambda);
  if ((unsigned)pr->allocator >= HS_AGC_NALLOCATORS)
    return hs_error_set(err, HS_EINVAL, "allocator: %d is not an allocator", (int)pr->allocator);
  *n = pr->partitions ? pr->partitions : pr->k;
  if (*n + 1 < pr->k)
    return hs_error_set(err, HS_ERANGE,
                        "partitions: %zu is below k-1 = %zu, the least the layout needs", *n,
                        pr->k - 1);
  if (*n > PARTITIONS_MAX)
    return hs_error_set(err, HS_ERANGE, "partitions: %zu is above 2^31", *n);
  return HS_OK;
}

static void layout_alloc(hs_agc_layout *L, size_t k, size_t nnz) {
  L->row = hs_calloc(k + 1, sizeof *L->row);
  L->col = hs_malloc((nnz ? nnz : 1) * sizeof *L->col);
  L->coef = hs_malloc((nnz ? nnz : 1) * sizeof *L->coef);
  L->nnz = nnz;
}

static void layout_free(hs_agc_layout *L) {
  hs_free(L->row);
  hs_free(L->col);
  hs_free(L->coef);
}

/* s_r: the partitions of its own active worker r holds besides the shared one */
static size_t own_parts(size_t r, size_t kact, size_t n) {
  if (kact == 1) return n - 1;
  if (r == 0) return n + 1 - kact;
  return r + 1 < kact ? 1 : 0;
}

static void build_layouts(hs_agc_plan *P) {
  size_t nnz = P->n + P->active - 1;
  layout_alloc(&P->shared, P->k, nnz);
  layout_alloc(&P->stair, P->k, nnz);
  size_t r = 0, at = 0, prev_sh = 0, prev_st = 0;
  double last = 0.0;
  for (size_t i = 0; i < P->k; i++) {
    P->shared.row[i] = P->stair.row[i] = at;
    if (P->c_inv[i] <= 0.0) continue;
    size_t s = own_parts(r, P->active, P->n);
    double y = P->shares[i];
    /* shared: partition 0 with Y - s, then s partitions of its own with 1 */
    P->shared.col[at] = 0;
    P->shared.coef[at] = y - (double)s;
    for (size_t q = 1; q <= s; q++) {
      P->shared.col[at + q] = prev_sh + q;
      P->shared.coef[at + q] = 1.0;
    }
    prev_sh += s;
    /* stair: partitions prev..prev+s */
    for (size_t q = 0; q <= s; q++) P->stair.col[at + q] = prev_st + q;
    if (s == 0) {
      P->stair.coef[at] = y;
      last = y;
    } else {
      double first = r == 0 ? 1.0 : 1.0 - last;
      P->stair.coef[at] = first;
      for (size_t q = 1; q < s; q++) P->stair.coef[at + q] = 1.0;
      last = y - (first + (double)(s - 1));
      P->stair.coef[at + s] = last;
    }
    prev_st += s;
    at += s + 1;
    r++;
  }
  P->shared.row[P->k] = P->stair.row[P->k] = at;
}

void hs_agc_layout_free(hs_agc_layout *L) {
  if (!L) return;
  layout_free(L);
  memset(L, 0, sizeof *L);
}

/* Breakpoints within this of an integer are that integer, so that rounding in
 * the running sum never adds a partition with a coefficient of 1e-16 (a whole
 * partition of work for nothing). */
#define SNAP 1e-9

static double snapped(double x) {
  double r = nearbyint(x);
  return fabs(x - r) < SNAP ? r : x;
}

void hs_agc_layout_interval(const hs_agc_plan *P, hs_agc_layout *L) {
  layout_alloc(L, P->k, P->n + (P->active ? P->active - 1 : 0));
  double nd = (double)P->n, pos = 0.0;
  size_t at = 0, r = 0;
  for (size_t i = 0; i < P->k; i++) {
    L->row[i] = at;
    if (P->c_inv[i] <= 0.0) continue;
    double end = ++r == P->active ? nd : snapped(fmin(nd, pos + P->shares[i]));
    for (size_t j = (size_t)floor(pos); (double)j < end && j < P->n; j++) {
      double a = fmin(end, (double)j + 1.0) - fmax(pos, (double)j);
      if (a <= 0.0) continue;
      L->col[at] = j;
      L->coef[at++] = a;
    }
    pos = end;
  }
  L->row[P->k] = at;
  L->nnz = at;
}

hs_agc_plan *hs_agc_plan_from_bits(const hs_agc_params *pr, const int64_t *bits, hs_error *err) {
  size_t n = 0;
  if (check_params(pr, &n, err) != HS_OK) return NULL;
  size_t k = pr->k;
  int64_t sum = 0;
  for (size_t i = 0; i < k; i++) {
    if (bits[i] < 0 || bits[i] > pr->z_res) {
      hs_error_set(err, HS_ERANGE, "bits[%zu]: %lld is outside [0, z_res = %lld]", i,
                   (long long)bits[i], (long long)pr->z_res);
      return NULL;
    }
    sum += bits[i];
  }
  if (sum != pr->z_res) {
    hs_error_set(err, HS_EINVAL, "bits: they sum to %lld, not z_res = %lld", (long long)sum,
                 (long long)pr->z_res);
    return NULL;
  }
  hs_agc_plan *P = hs_calloc(1, sizeof *P);
  P->k = k;
  P->n = n;
  P->offset = pr->offset;
  P->allocator = pr->allocator;
  P->d = pr->d;
  P->lambda = pr->lambda;
  P->z_res = pr->z_res;
  P->bits = hs_malloc(k * sizeof *P->bits);
  P->wire_bits = hs_malloc(k * sizeof *P->wire_bits);
  P->omega = hs_malloc(k * sizeof *P->omega);
  P->c_inv = hs_malloc(k * sizeof *P->c_inv);
  P->shares = hs_malloc(k * sizeof *P->shares);
  P->weights = hs_malloc(k * sizeof *P->weights);
  P->weights_lane2 = hs_malloc(k * sizeof *P->weights_lane2);
  double S = 0.0;
  for (size_t i = 0; i < k; i++) {
    P->bits[i] = bits[i];
    P->wire_bits[i] = bits[i] + pr->offset;
    P->omega[i] = hs_agc_omega(pr->d, P->wire_bits[i]);
    P->c_inv[i] = isinf(P->omega[i]) ? 0.0 : (1.0 - pr->p[i]) / (pr->p[i] + P->omega[i]);
    S += P->c_inv[i];
    if (P->c_inv[i] > 0.0) P->active++;
  }
  /* z_res >= 1 with offset 1 (checked) gives someone >= 2 bits: S > 0 */
  P->sum_c_inv = S;
  P->kappa = 1.0 / (1.0 + 1.0 / (pr->lambda * S));
  double nd = (double)n;
  P->predicted_error = nd * nd / S;
  P->objective = hs_agc_objective(pr->p, k, pr->d, bits);
  for (size_t i = 0; i < k; i++) {
    bool on = P->c_inv[i] > 0.0;
    P->shares[i] = nd * P->c_inv[i] / S;
    P->weights[i] = on ? 1.0 / (1.0 - pr->p[i]) : 0.0;
    P->weights_lane2[i] = on ? P->kappa / (1.0 - pr->p[i]) : 0.0;
  }
  build_layouts(P);
  return P;
}

hs_agc_plan *hs_agc_plan_create(const hs_agc_params *pr, hs_error *err) {
  size_t n = 0;
  if (check_params(pr, &n, err) != HS_OK) return NULL;
  int64_t *bits = hs_malloc(pr->k * sizeof *bits);
  hs_agc_plan *P = NULL;
  if (hs_agc_allocate(pr->allocator, pr->p, pr->k, pr->d, pr->z_res, bits, err) == HS_OK)
    P = hs_agc_plan_from_bits(pr, bits, err);
  hs_free(bits);
  return P;
}

/* OSGC: equal bits, shares from delta_i^-1 = (1-p_i)/p_i over the active
 * workers (quantisation ignored; p_i = 0 is taken as 1e-12), layouts rebuilt
 * from those shares; the predicted error is the true one, with omega. */
hs_agc_plan *hs_agc_plan_osgc(const hs_agc_params *pr, hs_error *err) {
  hs_agc_params q = *pr;
  q.allocator = HS_AGC_EQUAL;
  hs_agc_plan *P = hs_agc_plan_create(&q, err);
  if (!P) return NULL;
  double S = 0.0, nd = (double)P->n, R = 0.0;
  for (size_t i = 0; i < P->k; i++)
    if (P->c_inv[i] > 0.0) S += (1.0 - pr->p[i]) / fmax(pr->p[i], 1e-12);
  for (size_t i = 0; i < P->k; i++) {
    double y = P->c_inv[i] > 0.0 ? nd * (1.0 - pr->p[i]) / fmax(pr->p[i], 1e-12) / S : 0.0;
    P->shares[i] = y;
    if (y > 0.0) R += y * y / P->c_inv[i];
  }
  P->predicted_error = R;
  layout_free(&P->shared);
  layout_free(&P->stair);
  build_layouts(P);
  return P;
}

void hs_agc_plan_destroy(hs_agc_plan *P) {
  if (!P) return;
  hs_free(P->bits);
  hs_free(P->wire_bits);
  hs_free(P->omega);
  hs_free(P->c_inv);
  hs_free(P->shares);
  hs_free(P->weights);
  hs_free(P->weights_lane2);
  layout_free(&P->shared);
  layout_free(&P->stair);
  hs_free(P);
}

void hs_agc_encode(const hs_agc_layout *L, size_t i, const double *grads, size_t dim, double *out) {
  for (size_t c = 0; c < dim; c++) out[c] = 0.0;
  for (size_t e = L->row[i]; e < L->row[i + 1]; e++) {
    const double *g = grads + L->col[e] * dim;
    double a = L->coef[e];
    for (size_t c = 0; c < dim; c++) out[c] += a * g[c];
  }
}

void hs_agc_decode(const hs_agc_plan *plan, const double *weight, const bool *arrived,
                   const double *msgs, size_t dim, double *out) {
  for (size_t c = 0; c < dim; c++) out[c] = 0.0;
  for (size_t i = 0; i < plan->k; i++) {
    if (!arrived[i] || weight[i] == 0.0) continue;
    const double *m = msgs + i * dim;
    for (size_t c = 0; c < dim; c++) out[c] += weight[i] * m[c];
  }
}
