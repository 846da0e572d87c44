/* test_agc_code.c: the AGC code layouts and decoder. Properties of both
 * fillings over random plans (column sums 1, row sums Y, sum Y = n, the
 * support), and, by exact enumeration over all 2^k straggler patterns for
 * small k: E[decoded] = g (lane 1) and kappa g (lane 2), and
 * E||ghat - g||^2 = n^2 / sum c^-1 with the quantiser-variance model, to 1e-12
 * relative; with the real quantiser's exact variance (D = dim/4) the error is
 * at most the prediction. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policies/hs_agc.h"

/* p_i = 0 (a worker that never straggles) is allowed when pmin = 0; the exact
 * enumeration keeps p_i >= pmin > 0 because with p_i = 0 and many bits the
 * error is ~1e-18 ||g||^2, below the rounding of the decoded sum itself. */
static hs_agc_plan *random_plan(hs_agc_rng *r, size_t kmax, double *p, double d, double pmin) {
  hs_agc_params pr;
  hs_agc_params_init(&pr);
  pr.k = 1 + (size_t)(hs_agc_rng_next(r) % kmax);
  for (size_t i = 0; i < pr.k; i++) p[i] = hs_agc_rng_uniform(r) < 0.1 ? pmin : pmin + (0.95 - pmin) * hs_agc_rng_uniform(r);
  pr.p = p;
  pr.d = d > 0.0 ? d : exp(log(0.01) + hs_agc_rng_uniform(r) * log(1e3));
  pr.offset = 1 + (int)(hs_agc_rng_next(r) % 2);
  /* from below k (some workers off with offset 1) to 4k */
  pr.z_res = 1 + (int64_t)(hs_agc_rng_next(r) % (4 * pr.k));
  size_t nmin = pr.k > 1 ? pr.k - 1 : 1;
  pr.partitions = nmin + (size_t)(hs_agc_rng_next(r) % 4);
  pr.allocator = (hs_agc_allocator)(hs_agc_rng_next(r) % HS_AGC_NALLOCATORS);
  pr.lambda = 0.25 + 4.0 * hs_agc_rng_uniform(r);
  hs_error err = {0};
  hs_agc_plan *P = hs_agc_plan_create(&pr, &err);
  cr_assert(P, "%s", err.msg);
  return P;
}

static void check_layout(const hs_agc_plan *P, const hs_agc_layout *L, const char *name, int trial) {
  double *col = calloc(P->n, sizeof *col);
  cr_assert_eq(L->nnz, P->n + P->active - 1, "%s: nnz", name);
  cr_assert_eq(L->row[P->k], L->nnz);
  double ysum = 0.0;
  for (size_t i = 0; i < P->k; i++) {
    size_t len = L->row[i + 1] - L->row[i];
    if (P->c_inv[i] == 0.0) {
      cr_assert_eq(len, 0, "%s: worker %zu is off but holds partitions", name, i);
      cr_assert_eq(P->shares[i], 0.0);
      continue;
    }
    cr_assert(len >= 1);
    if (P->n <= P->active) cr_assert(len <= 2, "trial %d: %s: worker %zu computes %zu partitions", trial, name, i, len);
    double row = 0.0;
    for (size_t e = L->row[i]; e < L->row[i + 1]; e++) {
      cr_assert(L->col[e] < P->n);
      if (e > L->row[i]) cr_assert(L->col[e] > L->col[e - 1], "%s: columns not ascending", name);
      row += L->coef[e];
      col[L->col[e]] += L->coef[e];
    }
    cr_assert(fabs(row - P->shares[i]) <= 1e-12 * (1.0 + (double)P->n), "trial %d: %s: row %zu sums to %.17g, Y = %.17g",
              trial, name, i, row, P->shares[i]);
    ysum += P->shares[i];
  }
  for (size_t j = 0; j < P->n; j++)
    cr_assert(fabs(col[j] - 1.0) <= 1e-12 * (1.0 + (double)P->n), "trial %d: %s: column %zu sums to %.17g", trial,
              name, j, col[j]);
  cr_assert(fabs(ysum - (double)P->n) <= 1e-12 * (double)P->n, "sum Y = %.17g, n = %zu", ysum, P->n);
  free(col);
}

Test(agc_layout, fillings_over_random_plans) {
  hs_agc_rng r;
  hs_agc_rng_init(&r, 21, 1);
  double p[40];
  for (int trial = 0; trial < 400; trial++) {
    hs_agc_plan *P = random_plan(&r, 40, p, 0.0, 0.0);
    cr_assert(P->active >= 1);
    check_layout(P, &P->shared, "shared", trial);
    check_layout(P, &P->stair, "stair", trial);
    /* weights */
    for (size_t i = 0; i < P->k; i++) {
      if (P->c_inv[i] == 0.0) continue;
      cr_assert(fabs(P->weights[i] * (1.0 - p[i]) - 1.0) <= 1e-15);
      cr_assert(fabs(P->weights_lane2[i] - P->kappa * P->weights[i]) <= 1e-15 * P->weights[i]);
    }
    cr_assert(P->kappa > 0.0 && P->kappa <= 1.0); /* 1 only by rounding, S > 1e16 */
    double nd = (double)P->n;
    cr_assert(fabs(P->predicted_error - nd * nd / P->sum_c_inv) <= 1e-15 * P->predicted_error);
    hs_agc_plan_destroy(P);
  }
}

/* Exact expectations over all 2^k straggler patterns, quantisation by its
 * variance: model (omega_i ||m_i||^2) or the real quantiser's exact one. */
typedef struct moments {
  double mean[3 * 8]; /* E[ghat], dim <= 24 */
  double mse;         /* E||ghat - g||^2 */
} moments;

static void enumerate(const hs_agc_plan *P, const hs_agc_layout *L, const double *p,
                      const double *w, const double *grads, size_t dim, bool real_q,
                      moments *out) {
  size_t k = P->k;
  double *msg = calloc(k * dim, sizeof *msg), *g = calloc(dim, sizeof *g), *dec = calloc(dim, sizeof *dec);
  double *qvar = calloc(k, sizeof *qvar);
  bool *arr = calloc(k, sizeof *arr);
  for (size_t j = 0; j < P->n; j++)
    for (size_t c = 0; c < dim; c++) g[c] += grads[j * dim + c];
  for (size_t i = 0; i < k; i++) {
    hs_agc_encode(L, i, grads, dim, msg + i * dim);
    double nn = 0.0;
    for (size_t c = 0; c < dim; c++) nn += msg[i * dim + c] * msg[i * dim + c];
    qvar[i] = P->c_inv[i] == 0.0 ? 0.0
              : real_q           ? hs_agc_quant_variance(msg + i * dim, dim, P->wire_bits[i])
                                 : P->omega[i] * nn;
  }
  memset(out, 0, sizeof *out);
  for (uint64_t mask = 0; mask < ((uint64_t)1 << k); mask++) {
    double prob = 1.0, qv = 0.0;
    for (size_t i = 0; i < k; i++) {
      arr[i] = (mask >> i) & 1;
      prob *= arr[i] ? 1.0 - p[i] : p[i];
      if (arr[i]) qv += w[i] * w[i] * qvar[i];
    }
    if (prob == 0.0) continue;
    /* E over the quantiser: the unbiased message itself, plus its variance */
    hs_agc_decode(P, w, arr, msg, dim, dec);
    double e2 = 0.0;
    for (size_t c = 0; c < dim; c++) {
      out->mean[c] += prob * dec[c];
      e2 += (dec[c] - g[c]) * (dec[c] - g[c]);
    }
    out->mse += prob * (e2 + qv);
  }
  free(msg), free(g), free(dec), free(qvar), free(arr);
}

/* every partition gradient = one random gbar (dim <= 8); returns ||gbar||^2 */
static double equal_grads(hs_agc_rng *r, size_t n, size_t dim, double *grads) {
  double gbar[8], gb2 = 0.0;
  for (size_t c = 0; c < dim; c++) {
    gbar[c] = 2.0 * hs_agc_rng_uniform(r) - 1.0;
    gb2 += gbar[c] * gbar[c];
  }
  for (size_t j = 0; j < n; j++) memcpy(grads + j * dim, gbar, dim * sizeof *gbar);
  return gb2;
}

static double rel(double a, double b) { return fabs(a - b) / fmax(fabs(b), 1e-300); }

Test(agc_enum, unbiased_and_error_closed_form) {
  hs_agc_rng r;
  hs_agc_rng_init(&r, 22, 1);
  double p[10], grads[14 * 3];
  const size_t dim = 3;
  for (int trial = 0; trial < 120; trial++) {
    hs_agc_plan *P = random_plan(&r, 10, p, 0.0, 0.02);
    const hs_agc_layout *Ls[2] = {&P->shared, &P->stair};
    for (int l = 0; l < 2; l++) {
      /* arbitrary partition gradients: E[lane 1] = g, E[lane 2] = kappa g */
      double g[3] = {0, 0, 0};
      for (size_t j = 0; j < P->n; j++)
        for (size_t c = 0; c < dim; c++) {
          grads[j * dim + c] = 2.0 * hs_agc_rng_uniform(&r) - 1.0;
          g[c] += grads[j * dim + c];
        }
      moments m1, m2;
      enumerate(P, Ls[l], p, P->weights, grads, dim, false, &m1);
      enumerate(P, Ls[l], p, P->weights_lane2, grads, dim, false, &m2);
      double gn = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
      for (size_t c = 0; c < dim; c++) {
        cr_assert(fabs(m1.mean[c] - g[c]) <= 1e-12 * fmax(gn, 1.0), "trial %d: E[ghat]_%zu = %.17g, g = %.17g",
                  trial, c, m1.mean[c], g[c]);
        cr_assert(fabs(m2.mean[c] - P->kappa * g[c]) <= 1e-12 * fmax(gn, 1.0));
      }
      /* equal partition gradients: the error is exactly n^2/S ||gbar||^2 */
      double gb2 = equal_grads(&r, P->n, dim, grads);
      enumerate(P, Ls[l], p, P->weights, grads, dim, false, &m1);
      double want = P->predicted_error * gb2;
      cr_assert(rel(m1.mse, want) <= 1e-12, "trial %d: E||err||^2 = %.17g, n^2/S = %.17g (rel %.3g)", trial,
                m1.mse, want, rel(m1.mse, want));
      /* lane 2: (1-kappa)^2 n^2 + kappa^2 R, which lambda = 1 minimises */
      enumerate(P, Ls[l], p, P->weights_lane2, grads, dim, false, &m2);
      double n = (double)P->n, kap = P->kappa;
      double want2 = ((1 - kap) * (1 - kap) * n * n + kap * kap * P->predicted_error) * gb2;
      cr_assert(rel(m2.mse, want2) <= 1e-12, "trial %d: lane 2 %.17g vs %.17g", trial, m2.mse, want2);
    }
    hs_agc_plan_destroy(P);
  }
}

Test(agc_enum, real_quantiser_within_prediction) {
  hs_agc_rng r;
  hs_agc_rng_init(&r, 23, 1);
  double p[8], grads[11 * 6];
  const size_t dim = 6;
  for (int trial = 0; trial < 60; trial++) {
    hs_agc_plan *P = random_plan(&r, 8, p, (double)dim / 4.0, 0.02);
    double gb2 = equal_grads(&r, P->n, dim, grads);
    moments m, mm;
    enumerate(P, &P->shared, p, P->weights, grads, dim, true, &m);
    enumerate(P, &P->shared, p, P->weights, grads, dim, false, &mm);
    cr_assert(m.mse <= mm.mse * (1.0 + 1e-12), "trial %d: real %.17g > model %.17g", trial, m.mse, mm.mse);
    cr_assert(rel(mm.mse, P->predicted_error * gb2) <= 1e-12);
    hs_agc_plan_destroy(P);
  }
}

Test(agc_plan, bad_input_names_the_field) {
  const double p[3] = {0.1, 1.2, 0.3};
  hs_agc_params pr;
  hs_agc_params_init(&pr);
  pr.p = p, pr.k = 3, pr.d = 1.0, pr.z_res = 6;
  hs_error err = {0};
  cr_assert_null(hs_agc_plan_create(&pr, &err));
  cr_assert_str_eq(err.msg, "p[1]: 1.2 is outside [0,1)");
  const double q[3] = {0.1, 0.2, 0.3};
  pr.p = q;
  pr.d = 0.0;
  cr_assert_null(hs_agc_plan_create(&pr, &err));
  cr_assert(strstr(err.msg, "d: 0:") == err.msg, "%s", err.msg);
  pr.d = 1.0;
  pr.z_res = 0;
  cr_assert_null(hs_agc_plan_create(&pr, &err));
  cr_assert(strstr(err.msg, "z_res: 0 is below 1") == err.msg, "%s", err.msg);
  pr.offset = 2; /* with a 2-bit floor nobody is off: z_res = 0 is a plan */
  hs_agc_plan *P = hs_agc_plan_create(&pr, &err);
  cr_assert(P, "%s", err.msg);
  cr_assert_eq(P->active, 3);
  hs_agc_plan_destroy(P);
  pr.offset = 3;
  cr_assert_null(hs_agc_plan_create(&pr, &err));
  cr_assert(strstr(err.msg, "offset: 3") == err.msg, "%s", err.msg);
  pr.offset = 1, pr.z_res = 6, pr.partitions = 1;
  cr_assert_null(hs_agc_plan_create(&pr, &err));
  cr_assert_str_eq(err.msg, "partitions: 1 is below k-1 = 2, the least the layout needs");
  pr.partitions = 0;
  const int64_t bad[3] = {1, 2, 2};
  cr_assert_null(hs_agc_plan_from_bits(&pr, bad, &err));
  cr_assert_str_eq(err.msg, "bits: they sum to 5, not z_res = 6");
  const double z0[2] = {0.0, 0.5};
  pr.p = z0, pr.k = 2, pr.d = 1e-300, pr.z_res = 4000;
  cr_assert_null(hs_agc_plan_create(&pr, &err));
  cr_assert(strstr(err.msg, "p[0]: 0 with d = 1e-300") == err.msg, "%s", err.msg);
}

Test(agc_plan, workers_off_with_offset_1) {
  /* 2 residual bits for 4 workers: at most 2 are on; the others hold nothing */
  const double p[4] = {0.1, 0.2, 0.3, 0.4};
  hs_agc_params pr;
  hs_agc_params_init(&pr);
  pr.p = p, pr.k = 4, pr.d = 1.0, pr.z_res = 2, pr.allocator = HS_AGC_DP;
  hs_error err = {0};
  hs_agc_plan *P = hs_agc_plan_create(&pr, &err);
  cr_assert(P, "%s", err.msg);
  size_t off = 0;
  for (size_t i = 0; i < 4; i++)
    if (P->bits[i] == 0) {
      off++;
      cr_assert_eq(P->weights[i], 0.0);
      cr_assert_eq(P->shared.row[i + 1] - P->shared.row[i], 0);
    }
  cr_assert_eq(P->active + off, 4);
  cr_assert(P->active <= 2);
  check_layout(P, &P->shared, "shared", -1);
  check_layout(P, &P->stair, "stair", -1);
  hs_agc_plan_destroy(P);
}
