/* regime_agc_code.c: the codes the agc regime runs (the proposed scheme and
 * the baselines of specs/agc.md section 6) and the straggler probabilities
 * they are planned with.
 *
 * A code is a sparse k x n matrix (hs_agc_layout), per-worker decode weights
 * for two lanes, bits per coordinate on the wire and the predicted residual
 * error. The proposed scheme and OSGC come from the planner (hs_agc.h; the
 * nonnegative interval layout by default, or the S-shared filling the public
 * code trains with, whose negative coefficients make an unreliable worker's
 * message as large as two partition gradients when they differ, beyond the
 * planner's model); the others are built
 * here, all with the planner's equal split of Z_res (z_i = b_i + offset; a
 * worker left with z_i <= 1 is off, as in the planner: it sends nothing):
 *   sgc    d_j ~ U{0..4} per partition, the vector redrawn until its mean is in
 *          (1.9, 2.05) (the public code's genran_vec), d_j distinct active
 *          workers hold partition j with 1/((1-p_i) d_j); weights 1
 *   bgc    every (active worker, partition) with probability 2/k'; coefficient
 *          1, weights 1 (biased, not normalised)
 *   ehd    consecutive pairs of active workers hold the same block of
 *          partitions (ErasureHead), coefficient 1, weights 1 (biased)
 *   issgd  partition j on active worker j mod k', weights 1 (what arrives is
 * summed) gd     partition j on worker j mod k, full precision (32 bits), no
 *          deadline, no quantisation: the exact gradient
 * SGC and BGC draw from a stream keyed by the scenario seed: the same support
 * every run. Predicted error (agc_code_predicted) in units of ||g_bar||^2 with
 * all partition gradients equal: the bias (sum_i (1-p_i) w_i Y_i - n)^2 plus
 * the variance sum_i (1-p_i)(p_i + omega_i) w_i^2 Y_i^2; for the proposed
 * scheme this is the planner's n^2 / sum c^-1 (tested).
 *
 * Messages, decode and the exact residual error (agc_code_expected): given
 * the partition gradients, E||ghat - g||^2 over independent stragglers and
 * quantisers is a closed form (bias, straggle, the quantiser's exact
 * variance), O(nnz x dim); the planner's omega model of the quantiser term
 * beside it shows how far the planner's D is from the quantiser (tested
 * against the 2^k enumeration and simulated decodes in
 * tests/unit/test_agc_residual.c). agc_omega_gaussian: the quantiser's
 * relative variance on a seeded normal vector, d_rule measured's stand-in
 * for gradients when no learner runs.
 *
 * Straggler probabilities from profiles (agc_p_from_profiles): the compute
 * time of a profile is lognormal (hs_profile.h), so P(compute > budget) is a
 * normal tail once the deadline minus the upload is turned into work seconds
 * through the speed trace (bisection on the monotone stretch). The upload
 * gets the fair share of the server link among the senders (the fluid
 * network's rate when every upload overlaps: an estimate, the timeline then
 * decides). Rejected: Monte Carlo over the device's own stream (it would shift
 * the stream the timeline draws from, and the closed form is exact for the
 * compute part).
 *
 * model_load (agc_p_model_load): the model's lag against the slack the
 * planned load and bits leave, exp(-mu_i slack / unit), in closed form.
 *
 * Costs: build O(nnz log nnz) (a sort of the triplets), O(k + n) draws. */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_select.h"
#include "regime_agc.h"
#include "sim_run.h"

const char *const agc_scheme_names[AGC_NSCHEMES + 1] = {"proposed", "osgc",  "sgc", "bgc",
                                                        "ehd",      "issgd", "gd",  NULL};

agc_scheme agc_scheme_of(const char *name) {
  for (int s = 0; s < AGC_NSCHEMES; s++)
    if (!strcmp(agc_scheme_names[s], name)) return (agc_scheme)s;
  return AGC_PROPOSED;
}

void agc_code_free(agc_code *c) {
  hs_free(c->L.row);
  hs_free(c->L.col);
  hs_free(c->L.coef);
  hs_free(c->w);
  hs_free(c->w2);
  hs_free(c->z);
  hs_free(c->omega);
  memset(c, 0, sizeof *c);
}

double agc_code_predicted(const agc_code *c, const double *p) {
  double mean = 0.0, var = 0.0;
  for (size_t i = 0; i < c->k; i++) {
    double y = 0.0;
    for (size_t e = c->L.row[i]; e < c->L.row[i + 1]; e++) y += c->L.coef[e];
    if (y == 0.0 || c->z[i] == 0) continue;
    double q = 1.0 - p[i], wy = c->w[i] * y;
    mean += q * wy;
    var += q * (p[i] + c->omega[i]) * wy * wy;
  }
  double bias = mean - (double)c->n;
  return bias * bias + var;
}

/* --- messages, decode, the exact expectation ---------------------------- */

void agc_code_message(const agc_code *c, size_t i, const double *const *g, size_t dim,
                      double *msg) {
  memset(msg, 0, dim * sizeof *msg);
  for (size_t e = c->L.row[i]; e < c->L.row[i + 1]; e++) {
    const double *gj = g[c->L.col[e]];
    if (!gj) continue;
    double a = c->L.coef[e];
    for (size_t q = 0; q < dim; q++) msg[q] += a * gj[q];
  }
}

void agc_code_decode(const agc_code *c, const double *const *g, size_t dim, const bool *arrived,
                     uint64_t seed, uint32_t iter, double *msg, double *ghat, double *ghat2) {
  memset(ghat, 0, dim * sizeof *ghat);
  if (ghat2) memset(ghat2, 0, dim * sizeof *ghat2);
  for (size_t i = 0; i < c->k; i++) {
    if (!arrived[i] || c->L.row[i] == c->L.row[i + 1]) continue;
    agc_code_message(c, i, g, dim, msg);
    if (c->quantise) {
      hs_agc_rng rg;
      hs_agc_rng_init(&rg, seed, ((uint64_t)iter << 24) ^ (uint64_t)i);
      hs_agc_quantize(msg, dim, c->z[i], &rg, msg);
    }
    for (size_t q = 0; q < dim; q++) {
      ghat[q] += c->w[i] * msg[q];
      if (ghat2) ghat2[q] += c->w2[i] * msg[q];
    }
  }
}

/* Independent arrivals a_i = 1 - p_i (1 with wait_all) and independent
 * quantisers: E[ghat] = sum_i a_i w_i m_i, and the variance of worker i's
 * term I_i w_i Q(m_i) is w_i^2 (a_i (||m_i||^2 + V_i) - a_i^2 ||m_i||^2). */
void agc_code_expected(const agc_code *c, const double *p, const double *const *g, size_t dim,
                       double *msg, double *mean, agc_residual *out) {
  memset(out, 0, sizeof *out);
  memset(mean, 0, dim * sizeof *mean);
  for (size_t j = 0; j < c->n; j++)
    if (g[j])
      for (size_t q = 0; q < dim; q++) mean[q] -= g[j][q];
  for (size_t i = 0; i < c->k; i++) {
    if (c->L.row[i] == c->L.row[i + 1] || c->z[i] == 0) continue;
    agc_code_message(c, i, g, dim, msg);
    double a = c->wait_all ? 1.0 : 1.0 - p[i], w2 = c->w[i] * c->w[i], m2 = 0.0;
    for (size_t q = 0; q < dim; q++) {
      mean[q] += a * c->w[i] * msg[q];
      m2 += msg[q] * msg[q];
    }
    out->straggle += w2 * a * (1.0 - a) * m2;
    if (c->quantise) {
      out->quant += w2 * a * hs_agc_quant_variance(msg, dim, c->z[i]);
      out->quant_model += w2 * a * c->omega[i] * m2;
    }
  }
  for (size_t q = 0; q < dim; q++) out->bias += mean[q] * mean[q];
}

double agc_omega_gaussian(size_t dim, int64_t z, uint64_t seed) {
  double *x = hs_malloc((dim ? dim : 1) * sizeof *x), sq = 0.0;
  hs_rng g;
  hs_rng_init(&g, seed, 0x4147432d44ULL, 0);
  for (size_t q = 0; q < dim; q++) {
    x[q] = gsl_cdf_ugaussian_Pinv(hs_rng_uniform_pos(&g));
    sq += x[q] * x[q];
  }
  double v = sq > 0.0 ? hs_agc_quant_variance(x, dim, z) / sq : 0.0;
  hs_free(x);
  return v;
}

/* --- triplets -> compressed rows ---------------------------------------- */

typedef struct trip {
  size_t i, j;
  double v;
} trip;

typedef struct trips {
  trip *t;
  size_t n, cap;
} trips;

static void trips_add(trips *T, size_t i, size_t j, double v) {
  if (T->n == T->cap) {
    T->cap = T->cap ? 2 * T->cap : 64;
    T->t = hs_realloc(T->t, T->cap * sizeof *T->t);
  }
  T->t[T->n++] = (trip){i, j, v};
}

static int trip_cmp(const void *a, const void *b) {
  const trip *x = a, *y = b;
  if (x->i != y->i) return x->i < y->i ? -1 : 1;
  return x->j < y->j ? -1 : x->j > y->j;
}

static void trips_to_layout(trips *T, size_t k, hs_agc_layout *L) {
  qsort(T->t, T->n, sizeof *T->t, trip_cmp);
  L->row = hs_calloc(k + 1, sizeof *L->row);
  L->col = hs_malloc((T->n ? T->n : 1) * sizeof *L->col);
  L->coef = hs_malloc((T->n ? T->n : 1) * sizeof *L->coef);
  L->nnz = T->n;
  for (size_t e = 0; e < T->n; e++) {
    L->row[T->t[e].i + 1]++;
    L->col[e] = T->t[e].j;
    L->coef[e] = T->t[e].v;
  }
  for (size_t i = 0; i < k; i++) L->row[i + 1] += L->row[i];
  hs_free(T->t);
  T->t = NULL;
}

/* --- the codes ------------------------------------------------------------ */

static hs_status from_planner(agc_code *c, agc_scheme s, const agc_opts *o, const double *p,
                              size_t k, size_t n, double d, hs_error *err) {
  hs_agc_params pr;
  hs_agc_params_init(&pr);
  pr.p = p;
  pr.k = k;
  pr.d = d;
  pr.z_res = o->z_res;
  pr.partitions = n;
  pr.offset = (int)o->offset;
  pr.lambda = o->lambda;
  if (s == AGC_PROPOSED && hs_agc_allocator_lookup(o->allocator, &pr.allocator, err) != HS_OK)
    return err ? err->status : HS_EINVAL;
  hs_agc_plan *P = s == AGC_OSGC ? hs_agc_plan_osgc(&pr, err) : hs_agc_plan_create(&pr, err);
  if (!P) return err ? err->status : HS_EINVAL;
  /* The code takes the plan's S-shared (or interval) layout, weights and omega. */
  if (o->layout && !strcmp(o->layout, "interval"))
    hs_agc_layout_interval(P, &c->L);
  else {
    c->L = P->shared;
    P->shared = (hs_agc_layout){0};
  }
  c->w = P->weights;
  c->w2 = P->weights_lane2;
  c->omega = P->omega;
  P->weights = P->weights_lane2 = P->omega = NULL;
  c->z = hs_malloc(k * sizeof *c->z);
  for (size_t i = 0; i < k; i++) c->z[i] = P->c_inv[i] > 0.0 ? P->wire_bits[i] : 0;
  c->predicted = P->predicted_error;
  hs_agc_plan_destroy(P);
  return HS_OK;
}

/* Distinct uniform integer in [0, n) from a stream (n >= 1). */
static size_t below(hs_rng *g, size_t n) { return (size_t)(hs_rng_uniform(g) * (double)n); }

static void build_sgc(trips *T, const size_t *act, size_t ka, const double *p, size_t n,
                      hs_rng *g) {
  uint32_t *dj = hs_malloc(n * sizeof *dj);
  for (int tries = 0; tries < 1000; tries++) {
    double sum = 0;
    for (size_t j = 0; j < n; j++) sum += (dj[j] = (uint32_t)below(g, 5));
    double mean = sum / (double)n;
    if (mean > 1.9 && mean < 2.05) break;
  }
  size_t *perm = hs_malloc(ka * sizeof *perm);
  for (size_t j = 0; j < n; j++) {
    size_t dd = dj[j] < ka ? dj[j] : ka;
    for (size_t r = 0; r < ka; r++) perm[r] = act[r];
    for (size_t r = 0; r < dd; r++) { /* partial Fisher-Yates */
      size_t s = r + below(g, ka - r);
      size_t t = perm[r];
      perm[r] = perm[s];
      perm[s] = t;
      trips_add(T, perm[r], j, 1.0 / ((1.0 - p[perm[r]]) * (double)dd));
    }
  }
  hs_free(perm);
  hs_free(dj);
}

static hs_status build_baseline(agc_code *c, agc_scheme s, const agc_opts *o, const double *p,
                                size_t k, size_t n, double d, uint64_t seed, hs_error *err) {
  c->z = hs_calloc(k, sizeof *c->z);
  c->omega = hs_calloc(k, sizeof *c->omega);
  c->w = hs_malloc(k * sizeof *c->w);
  c->w2 = hs_malloc(k * sizeof *c->w2);
  for (size_t i = 0; i < k; i++) c->w[i] = c->w2[i] = 1.0;
  size_t *act = hs_malloc(k * sizeof *act), ka = 0;
  if (s == AGC_GD) {
    c->quantise = false;
    c->wait_all = true;
    for (size_t i = 0; i < k; i++) {
      c->z[i] = 32;
      act[ka++] = i;
    }
  } else {
    hs_status st = hs_agc_check_inputs(p, k, d, o->z_res, o->offset, err);
    int64_t *b = hs_malloc(k * sizeof *b);
    if (st == HS_OK) st = hs_agc_allocate(HS_AGC_EQUAL, p, k, d, o->z_res, b, err);
    for (size_t i = 0; st == HS_OK && i < k; i++) {
      int64_t z = b[i] + (int64_t)o->offset;
      if (z <= 1) continue;
      c->z[i] = z;
      c->omega[i] = hs_agc_omega(d, z);
      act[ka++] = i;
    }
    hs_free(b);
    if (st != HS_OK) {
      hs_free(act);
      return st;
    }
    if (ka == 0) {
      hs_free(act);
      return hs_error_set(err, HS_ERANGE,
                          "z_res: %u bits split equally leave every worker at <= 1 bit: the "
                          "layout needs at least one worker on",
                          o->z_res);
    }
  }
  trips T = {0};
  hs_rng g;
  hs_rng_init(&g, seed, 0x414743u, (uint64_t)s);
  switch (s) {
    case AGC_SGC:
      build_sgc(&T, act, ka, p, n, &g);
      break;
    case AGC_BGC:
      for (size_t r = 0; r < ka; r++)
        for (size_t j = 0; j < n; j++)
          if (hs_rng_uniform(&g) < 2.0 / (double)ka) trips_add(&T, act[r], j, 1.0);
      break;
    case AGC_EHD: {
      size_t groups = (ka + 1) / 2;
      for (size_t r = 0; r < ka; r++)
        for (size_t j = (r / 2) * n / groups; j < (r / 2 + 1) * n / groups; j++)
          trips_add(&T, act[r], j, 1.0);
      break;
    }
    default: /* issgd, gd */
      for (size_t j = 0; j < n; j++) trips_add(&T, act[j % ka], j, 1.0);
      break;
  }
  hs_free(act);
  trips_to_layout(&T, k, &c->L);
  return HS_OK;
}

hs_status agc_code_build(agc_code *c, agc_scheme s, const agc_opts *o, const double *p, size_t k,
                         size_t n, double d, uint64_t seed, hs_error *err) {
  memset(c, 0, sizeof *c);
  c->scheme = s;
  c->k = k;
  c->n = n;
  c->quantise = true;
  hs_status st = s == AGC_PROPOSED || s == AGC_OSGC
                     ? from_planner(c, s, o, p, k, n, d, err)
                     : build_baseline(c, s, o, p, k, n, d, seed, err);
  if (st != HS_OK) {
    agc_code_free(c);
    return st;
  }
  if (s == AGC_GD)
    c->predicted = 0.0;
  else if (s != AGC_PROPOSED && s != AGC_OSGC)
    c->predicted = agc_code_predicted(c, p);
  return HS_OK;
}

/* --- straggler probabilities from the profiles ------------------------------
 */

static double upload_s(sim_run *r, size_t i, double bits, size_t senders) {
  const sim_spec *dv = sim_dev_sp(r, i);
  double srv = hs_net_link_bandwidth_bps(r->net, r->server_link) / (double)(senders ? senders : 1);
  double bps = dv->access_bps < srv ? dv->access_bps : srv;
  return dv->access_latency_s + hs_net_link_latency_s(r->net, r->server_link) + bits / bps;
}

double agc_nominal_arrival(sim_run *r, size_t i, uint64_t samples, double bits, size_t senders) {
  const sim_spec *dv = sim_dev_sp(r, i);
  double work = dv->overhead_s + (double)samples * r->dev[i].tau_s;
  return sim_dev_stretch_s(r, i, work, 0) + upload_s(r, i, bits, senders);
}

/* Work seconds (speed 1) device i gets done in the next budget_s seconds. */
static double work_within(sim_run *r, size_t i, double budget_s) {
  if (!sim_dev_sp(r, i)->trace) return budget_s;
  double lo = 0, hi = budget_s > 0 ? budget_s : 0;
  for (int it = 0; it < 200 && sim_dev_stretch_s(r, i, hi, 0) <= budget_s; it++) hi = 2 * hi + 1e-9;
  for (int it = 0; it < 100; it++) {
    double mid = 0.5 * (lo + hi);
    if (sim_dev_stretch_s(r, i, mid, 0) <= budget_s)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

void agc_p_from_profiles(sim_run *r, const uint64_t *samples, const double *bits, double deadline_s,
                         double p_min, double p_max, double *p) {
  for (size_t i = 0; i < r->ndev; i++) {
    const sim_spec *dv = sim_dev_sp(r, i);
    double budget = deadline_s - upload_s(r, i, bits[i], r->ndev);
    double work = budget > 0 ? work_within(r, i, budget) : -1.0, q;
    if (work < 0)
      q = 1.0;
    else if (samples[i] == 0 || r->dev[i].tau_s <= 0)
      q = work >= dv->overhead_s ? 0.0 : 1.0;
    else {
      double x = (work - dv->overhead_s) / ((double)samples[i] * r->dev[i].tau_s);
      if (x <= 0)
        q = 1.0;
      else if (dv->tau_cv <= 0)
        q = x >= 1.0 ? 0.0 : 1.0;
      else {
        double s2 = log1p(dv->tau_cv * dv->tau_cv);
        q = gsl_cdf_ugaussian_Q((log(x) + 0.5 * s2) / sqrt(s2));
      }
    }
    p[i] = q < p_min ? p_min : q > p_max ? p_max : q;
  }
}

void agc_p_model_load(sim_run *r, const uint64_t *samples, const double *bits, const double *mu,
                      double unit_s, double deadline_s, double p_min, double p_max, double *p) {
  for (size_t i = 0; i < r->ndev; i++) {
    double slack = deadline_s - agc_nominal_arrival(r, i, samples[i], bits[i], 1);
    double q = slack <= 0 ? 1.0 : exp(-mu[i] * slack / unit_s);
    p[i] = q < p_min ? p_min : q > p_max ? p_max : q;
  }
}

/* first_k: p_i = P(worker i's message is not among the first K, or comes after
 * the deadline), the marginal the unbiased decoder needs. The arrivals are
 * dependent through the ranking, so this is Monte Carlo: AGC_FK_DRAWS joint
 * draws of every worker's arrival (its profile's lognormal compute, stretched
 * by its speed trace, plus the upload), from a stream of its own keyed by
 * (seed, device, purpose): the timeline's streams are not touched. The K-th
 * arrival is found among the workers flagged `sends` (quickselect, O(k) per
 * draw; fewer senders than K: the deadline alone); every worker, sending or
 * not, is judged against it. Cost O(k x draws). */
#define AGC_FK_DRAWS 1000

void agc_p_first_k(sim_run *r, const uint64_t *samples, const double *bits, const bool *sends,
                   double deadline_s, size_t first_k, uint64_t seed, double p_min, double p_max,
                   double *p) {
  size_t k = r->ndev;
  double *t = hs_malloc(k * sizeof *t), *sel = hs_malloc(k * sizeof *sel);
  uint32_t *miss = hs_calloc(k, sizeof *miss);
  hs_rng *g = hs_malloc(k * sizeof *g);
  for (size_t i = 0; i < k; i++) {
    hs_rng_init(&g[i], seed, sim_dev_key(r, i), 0x464b4d43u);
  }
  for (int m = 0; m < AGC_FK_DRAWS; m++) {
    size_t ns = 0;
    for (size_t i = 0; i < k; i++) {
      const sim_spec *dv = sim_dev_sp(r, i);
      double cv = dv->tau_cv, f = 1.0;
      double u = ((double)(hs_rng_next(&g[i]) >> 11) + 0.5) * 0x1.0p-53;
      if (cv > 0) {
        double s2 = log1p(cv * cv);
        f = exp(sqrt(s2) * gsl_cdf_ugaussian_Pinv(u) - 0.5 * s2);
      }
      double work = dv->overhead_s + (double)samples[i] * r->dev[i].tau_s * f;
      t[i] = sim_dev_stretch_s(r, i, work, 0) + upload_s(r, i, bits[i], r->ndev);
      if (sends[i]) sel[ns++] = t[i];
    }
    double cut = deadline_s;
    if (first_k && first_k <= ns) {
      double kth = hs_select(sel, ns, first_k - 1); /* the first_k-th arrival */
      if (kth < cut) cut = kth;
    }
    for (size_t i = 0; i < k; i++) miss[i] += t[i] > cut;
  }
  for (size_t i = 0; i < k; i++) {
    double q = (double)miss[i] / AGC_FK_DRAWS;
    p[i] = q < p_min ? p_min : q > p_max ? p_max : q;
  }
  hs_free(t);
  hs_free(sel);
  hs_free(miss);
  hs_free(g);
}
