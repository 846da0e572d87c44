/* import.c: `hetsim-probe import`: a profile from a user's own training log,
 * for someone who trains with their own framework on a board and wants to
 * calibrate without the bundled trainers.
 *
 * Input: a timing CSV, one row per batch, columns `samples` and `time_s`
 * (other columns ignored), optional `round` (per-round totals give tau_cv)
 * and `start_s` (when the batch started, on the power log's clock); and
 * optionally a power CSV with `time_s` and `power_w` (an external meter or a
 * sensor logger). Output: one task of a profile through probe_profile_render,
 * the same writer and checks as calibrate, all or nothing.
 *
 * What is computed: tau_s = sum(time_s) / sum(samples); tau_cv = the CV of
 * per-round per-sample time when `round` is given (the profile's definition),
 * else the CV of per-batch per-sample time (an upper bound for independent
 * batches, and said so in the notes); busy_w = the energy of the power log
 * over the batches' windows (trapezoid, interpolated at the ends, as the meter
 * sensor does) divided by their time; idle_w = the mean power logged before the
 * first batch and after the last (at least two readings, else --idle-w).
 * overhead_s: 0 without both `round` and `start_s` (a batch log alone has no
 * per-round overhead; that output is unchanged). With both: each round's span
 * (first batch start to last batch end) against its batches' time and size:
 * rounds of one size give overhead = mean(span - batch time); sizes that
 * vary give least squares span = a + tau n (tau_s = the slope). The sign
 * question: a may come out negative (a board faster on short rounds: CFS
 * bursts, warm caches); the profile's overhead_s >= 0 cannot say that, so
 * overhead_s is 0, tau_s is refitted through the origin, and the fitted a is
 * written into the provenance. --run-times (other boards' logs of the same
 * run): tau_cv becomes this board's own part of the noise, the shared
 * per-round factor split off (probe_import_shared, a two-way decomposition
 * of log per-sample time); its CV is what the scenario's
 * dynamics.shared_slowdown.cv takes, and the command prints that snippet.
 * O(batches x log power rows). Rejected: guessing the clock offset between the
 * two logs (a window outside the power log is an error naming both ranges). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe.h"

/* Energy of the power log over [t0, t1]; the log must cover it. */
static hs_status window_j(const lrn_table *p, int ct, int cp, double t0, double t1, double *j,
                          hs_error *err) {
  size_t n = p->rows, c = p->cols;
#define PT(i) (p->v[(i) * c + (size_t)ct])
#define PP(i) (p->v[(i) * c + (size_t)cp])
  if (n < 2 || PT(0) > t0 || PT(n - 1) < t1)
    return hs_error_set(err, HS_ERANGE,
                        "power log covers [%.3f, %.3f] s, a batch ran [%.3f, %.3f] s: the logs must "
                        "share one clock",
                        n ? PT(0) : 0.0, n ? PT(n - 1) : 0.0, t0, t1);
  size_t lo = 0, hi = n - 1; /* last index with PT <= t0 */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (PT(mid) <= t0) lo = mid;
    else hi = mid;
  }
  double e = 0;
  for (size_t i = lo + 1; i < n && PT(i - 1) < t1; i++) {
    double a = PT(i - 1), b = PT(i);
    if (b <= t0) continue;
    double l = a < t0 ? t0 : a, h = b > t1 ? t1 : b, pa = PP(i - 1), pb = PP(i);
    e += 0.5 * (pa + (pb - pa) * (l - a) / (b - a) + pa + (pb - pa) * (h - a) / (b - a)) * (h - l);
  }
#undef PT
#undef PP
  *j = e;
  return HS_OK;
}

/* The per-round overhead from the rounds' spans (first batch start to last
 * batch end), their batches' time and their sizes; see the file header. */
static void fit_overhead(const double *span, const double *busy, const double *size, size_t m,
                         probe_import_result *out) {
  bool varies = false;
  for (size_t k = 1; k < m; k++)
    if (size[k] != size[0]) varies = true;
  if (!varies) {
    double gap = 0;
    for (size_t k = 0; k < m; k++) gap += span[k] - busy[k];
    out->overhead_fit = 1;
    out->overhead_raw = gap / (double)m;
    out->overhead_s = out->overhead_raw > 0 ? out->overhead_raw : 0;
    return;
  }
  double mn = 0, mt = 0;
  for (size_t k = 0; k < m; k++) {
    mn += size[k];
    mt += span[k];
  }
  mn /= (double)m;
  mt /= (double)m;
  double sxy = 0, sxx = 0, sty = 0, snn = 0;
  for (size_t k = 0; k < m; k++) {
    sxy += (size[k] - mn) * (span[k] - mt);
    sxx += (size[k] - mn) * (size[k] - mn);
    sty += size[k] * span[k];
    snn += size[k] * size[k];
  }
  double slope = sxy / sxx, a = mt - slope * mn;
  out->overhead_fit = 2;
  out->overhead_raw = a;
  if (a > 0 && slope > 0) {
    out->overhead_s = a;
    out->tau_s = slope;
  } else { /* the profile cannot say "faster on short rounds": no overhead, tau through the origin */
    out->overhead_s = 0;
    out->tau_s = sty / snn;
  }
}

hs_status probe_import_compute(const lrn_table *t, const lrn_table *p, probe_import_result *out,
                               hs_error *err) {
  memset(out, 0, sizeof *out);
  out->busy_w = out->idle_w = NAN;
  int cs = lrn_table_col(t, "samples"), ctm = lrn_table_col(t, "time_s");
  int cr = lrn_table_col(t, "round"), cst = lrn_table_col(t, "start_s");
  if (cs < 0 || ctm < 0)
    return hs_error_set(err, HS_EMISSING, "line 1: the header needs columns samples and time_s");
  if (t->rows == 0) return hs_error_set(err, HS_EMISSING, "no batches");
  size_t n = t->rows, c = t->cols;
  double *per = hs_calloc(n, sizeof *per);
  double sum_t = 0, sum_n = 0;
  hs_status st = HS_OK;
  for (size_t i = 0; i < n && st == HS_OK; i++) {
    double k = t->v[i * c + (size_t)cs], s = t->v[i * c + (size_t)ctm];
    if (!(k >= 1) || k != floor(k) || !isfinite(k))
      st = hs_error_set(err, HS_EINVAL, "line %zu, column samples: %g is not a whole number >= 1", i + 2, k);
    else if (!(s > 0) || !isfinite(s))
      st = hs_error_set(err, HS_EINVAL, "line %zu, column time_s: %g is not a number > 0", i + 2, s);
    else if (cr >= 0 && i > 0 && t->v[i * c + (size_t)cr] < t->v[(i - 1) * c + (size_t)cr])
      st = hs_error_set(err, HS_EINVAL, "line %zu, column round: rounds must not go back", i + 2);
    per[i] = s / k;
    sum_t += s;
    sum_n += k;
  }
  if (st != HS_OK) goto done;
  out->batches = n;
  out->tau_s = sum_t / sum_n;
  out->batch = (unsigned)llround(sum_n / (double)n);
  if (cr >= 0) {
    /* per round: its time over its samples; with start_s also its span */
    size_t m = 0;
    double *span = cst >= 0 ? hs_calloc(n, sizeof *span) : NULL, *busy = span ? hs_calloc(n, sizeof *busy) : NULL;
    double *size = span ? hs_calloc(n, sizeof *size) : NULL;
    for (size_t i = 0; i < n && st == HS_OK;) {
      double r = t->v[i * c + (size_t)cr], rt = 0, rn = 0, first = INFINITY, last = -INFINITY;
      for (; i < n && t->v[i * c + (size_t)cr] == r; i++) {
        rt += t->v[i * c + (size_t)ctm];
        rn += t->v[i * c + (size_t)cs];
        if (span) {
          double a = t->v[i * c + (size_t)cst];
          if (!isfinite(a)) st = hs_error_set(err, HS_EINVAL, "line %zu, column start_s: not a number", i + 2);
          if (a < first) first = a;
          if (a + t->v[i * c + (size_t)ctm] > last) last = a + t->v[i * c + (size_t)ctm];
        }
      }
      if (span) {
        span[m] = last - first;
        busy[m] = rt;
        size[m] = rn;
      }
      per[m++] = rt / rn;
    }
    out->rounds = m;
    out->tau_cv = probe_cv(per, m);
    if (span && st == HS_OK) fit_overhead(span, busy, size, m, out);
    free(span);
    free(busy);
    free(size);
    if (st != HS_OK) goto done;
  } else {
    out->tau_cv = probe_cv(per, n);
  }
  if (out->tau_cv > 10) out->tau_cv = 10;
  if (p) {
    int pt = lrn_table_col(p, "time_s"), pp = lrn_table_col(p, "power_w");
    if (pt < 0 || pp < 0) {
      st = hs_error_set(err, HS_EMISSING, "power log: line 1: the header needs columns time_s and power_w");
      goto done;
    }
    if (cst < 0) {
      st = hs_error_set(err, HS_EMISSING,
                        "line 1: with a power log the timing CSV needs a start_s column (on the log's clock)");
      goto done;
    }
    for (size_t i = 1; i < p->rows; i++)
      if (!(p->v[i * p->cols + (size_t)pt] > p->v[(i - 1) * p->cols + (size_t)pt])) {
        st = hs_error_set(err, HS_EPARSE, "power log: line %zu, column time_s: time does not increase", i + 2);
        goto done;
      }
    double e = 0, first = INFINITY, last = -INFINITY;
    for (size_t i = 0; i < n && st == HS_OK; i++) {
      double a = t->v[i * c + (size_t)cst], d = t->v[i * c + (size_t)ctm], j = 0;
      st = window_j(p, pt, pp, a, a + d, &j, err);
      if (st != HS_OK) hs_error_prefix(err, "line %zu", i + 2);
      e += j;
      if (a < first) first = a;
      if (a + d > last) last = a + d;
    }
    if (st != HS_OK) goto done;
    out->busy_w = e / sum_t;
    double idle = 0;
    size_t k = 0;
    for (size_t i = 0; i < p->rows; i++) {
      double x = p->v[i * p->cols + (size_t)pt];
      if (x < first || x > last) {
        idle += p->v[i * p->cols + (size_t)pp];
        k++;
      }
    }
    out->idle_readings = k;
    if (k >= 2) out->idle_w = idle / (double)k;
  }
done:
  free(per);
  return st;
}

/* Per-round per-sample times of one log, keyed by round (rounds ascending). */
static size_t round_times(const lrn_table *t, double *round, double *x) {
  int cs = lrn_table_col(t, "samples"), ctm = lrn_table_col(t, "time_s"), cr = lrn_table_col(t, "round");
  size_t m = 0, n = t->rows, c = t->cols;
  for (size_t i = 0; i < n;) {
    double r = t->v[i * c + (size_t)cr], rt = 0, rn = 0;
    for (; i < n && t->v[i * c + (size_t)cr] == r; i++) {
      rt += t->v[i * c + (size_t)ctm];
      rn += t->v[i * c + (size_t)cs];
    }
    round[m] = r;
    x[m++] = rt / rn;
  }
  return m;
}

/* One factor with loadings over B boards' centred log times y[b * n0 + r]
 * (r < R): principal-axis factoring of their covariance C. The diagonal's
 * communalities start at C_bb times the board's largest squared correlation
 * and are refitted from the top eigenpair (power iteration) until they
 * settle; a communality above C_bb (a Heywood case) is held at C_bb. Then
 * lam_b = sqrt(eigenvalue) v_b, psi_b = C_bb - lam_b^2, and Bartlett's
 * scores give the factor per round. O(B^2 R + iterations x B^2). */
static void fit_loadings(const double *y, size_t n0, size_t B, size_t R, probe_shared_result *out) {
  double *C = hs_calloc(B * B, sizeof *C), *h = hs_calloc(B, sizeof *h), *v = hs_calloc(B, sizeof *v),
         *w = hs_calloc(B, sizeof *w), *lam = hs_calloc(B, sizeof *lam);
  for (size_t i = 0; i < B; i++)
    for (size_t j = 0; j < B; j++) {
      double c = 0;
      for (size_t r = 0; r < R; r++) c += y[i * n0 + r] * y[j * n0 + r];
      C[i * B + j] = c / (double)(R - 1);
    }
  for (size_t i = 0; i < B; i++) {
    double best = 0;
    for (size_t j = 0; j < B; j++)
      if (j != i && C[i * B + i] > 0 && C[j * B + j] > 0) {
        double q = C[i * B + j] * C[i * B + j] / (C[i * B + i] * C[j * B + j]);
        if (q > best) best = q;
      }
    h[i] = best * C[i * B + i];
  }
  double ev = 0;
  for (int it = 0; it < 500; it++) {
    for (size_t i = 0; i < B; i++) v[i] = 1;
    for (int k = 0; k < 300; k++) { /* the top eigenpair of C with h on the diagonal */
      double nn = 0;
      for (size_t i = 0; i < B; i++) {
        w[i] = 0;
        for (size_t j = 0; j < B; j++) w[i] += (i == j ? h[i] : C[i * B + j]) * v[j];
        nn += w[i] * w[i];
      }
      nn = sqrt(nn);
      if (!(nn > 0)) break;
      for (size_t i = 0; i < B; i++) v[i] = w[i] / nn;
      ev = nn;
    }
    double moved = 0;
    for (size_t i = 0; i < B; i++) {
      lam[i] = sqrt(ev) * v[i];
      double hn = lam[i] * lam[i];
      if (hn > C[i * B + i]) hn = C[i * B + i];
      moved = fmax(moved, fabs(hn - h[i]));
      h[i] = hn;
    }
    if (moved < 1e-14) break;
  }
  double sum = 0, lmax = 0;
  for (size_t i = 0; i < B; i++) sum += lam[i];
  for (size_t i = 0; i < B; i++) {
    if (sum < 0) lam[i] = -lam[i];
    if (lam[i] < 0) lam[i] = 0; /* a board the load speeds up: not expressible, its own noise */
    if (lam[i] > lmax) lmax = lam[i];
  }
  double num_w = 0;
  for (size_t i = 0; i < B; i++) {
    double psi = C[i * B + i] - lam[i] * lam[i];
    if (psi < 0) psi = 0;
    out->own_cv[i] = sqrt(expm1(psi));
    out->loading[i] = lmax > 0 ? lam[i] / lmax : 1;
    w[i] = lam[i] / fmax(psi, 1e-6 * C[i * B + i] + 1e-300); /* Bartlett weights */
    num_w += w[i] * lam[i];
  }
  out->shared_cv = sqrt(expm1(lmax * lmax));
  out->factor_min = INFINITY;
  out->factor_max = -INFINITY;
  for (size_t r = 0; r < R; r++) {
    double z = 0;
    for (size_t i = 0; i < B; i++) z += w[i] * y[i * n0 + r];
    double f = num_w > 0 ? exp(lmax * z / num_w) : 1;
    out->factor_min = fmin(out->factor_min, f);
    out->factor_max = fmax(out->factor_max, f);
  }
  free(C), free(h), free(v), free(w), free(lam);
}

hs_status probe_import_shared(const lrn_table *const *logs, size_t nb, probe_shared_result *out, hs_error *err) {
  return probe_import_shared_model(logs, nb, false, out, err);
}

hs_status probe_import_shared_model(const lrn_table *const *logs, size_t nb, bool loadings,
                                    probe_shared_result *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  if (nb < 2 || nb > PROBE_SHARED_MAX)
    return hs_error_set(err, HS_EINVAL, "the shared factor needs 2 to %d boards' logs of one run, got %zu",
                        PROBE_SHARED_MAX, nb);
  for (size_t b = 0; b < nb; b++)
    if (lrn_table_col(logs[b], "round") < 0 || lrn_table_col(logs[b], "samples") < 0 ||
        lrn_table_col(logs[b], "time_s") < 0 || logs[b]->rows == 0)
      return hs_error_set(err, HS_EMISSING, "log %zu: the shared factor needs columns samples, time_s and round", b + 1);
  /* the rounds of logs[0] that every log has */
  size_t n0 = logs[0]->rows;
  double **rk = hs_calloc(nb, sizeof *rk), **xk = hs_calloc(nb, sizeof *xk);
  size_t *mk = hs_calloc(nb, sizeof *mk);
  for (size_t b = 0; b < nb; b++) {
    rk[b] = hs_calloc(logs[b]->rows, sizeof **rk);
    xk[b] = hs_calloc(logs[b]->rows, sizeof **xk);
    mk[b] = round_times(logs[b], rk[b], xk[b]);
  }
  double *l = hs_calloc(nb * n0, sizeof *l); /* l[b * R + r]: log per-sample time */
  size_t R = 0;
  for (size_t k = 0; k < mk[0]; k++) {
    bool all = true;
    for (size_t b = 1; b < nb && all; b++) {
      bool found = false;
      for (size_t j = 0; j < mk[b] && !found; j++)
        if (rk[b][j] == rk[0][k]) {
          l[b * n0 + R] = log(xk[b][j]);
          found = true;
        }
      all = found;
    }
    if (all) l[0 * n0 + R++] = log(xk[0][k]);
  }
  hs_status st = HS_OK;
  if (R < 3) st = hs_error_set(err, HS_EINVAL, "the logs share %zu rounds; the shared factor needs at least 3", R);
  if (st == HS_OK && loadings && nb < 3)
    st = hs_error_set(err, HS_EINVAL, "--shared loadings needs 3 or more boards' logs (2 cannot tell a loading "
                      "from a board's own noise), got %zu", nb);
  if (st == HS_OK) for (size_t b = 0; b < nb; b++) out->loading[b] = 1;
  if (st == HS_OK && loadings) {
    for (size_t b = 0; b < nb; b++) {
      double a = 0;
      for (size_t r = 0; r < R; r++) a += l[b * n0 + r];
      a /= (double)R;
      for (size_t r = 0; r < R; r++) l[b * n0 + r] -= a;
    }
    fit_loadings(l, n0, nb, R, out);
    out->boards = nb;
    out->rounds = R;
  } else if (st == HS_OK) {
    double B = (double)nb, Rd = (double)R, *a = hs_calloc(nb, sizeof *a), *cf = hs_calloc(R, sizeof *cf);
    for (size_t b = 0; b < nb; b++) {
      for (size_t r = 0; r < R; r++) a[b] += l[b * n0 + r];
      a[b] /= Rd;
    }
    double var_c = 0, mean_own = 0;
    out->factor_min = INFINITY;
    out->factor_max = -INFINITY;
    for (size_t r = 0; r < R; r++) {
      for (size_t b = 0; b < nb; b++) cf[r] += l[b * n0 + r] - a[b];
      cf[r] /= B;
      var_c += cf[r] * cf[r];
      if (exp(cf[r]) < out->factor_min) out->factor_min = exp(cf[r]);
      if (exp(cf[r]) > out->factor_max) out->factor_max = exp(cf[r]);
    }
    var_c /= Rd - 1;
    for (size_t b = 0; b < nb; b++) {
      double ss = 0;
      for (size_t r = 0; r < R; r++) {
        double e = l[b * n0 + r] - a[b] - cf[r];
        ss += e * e;
      }
      double s2 = ss / ((Rd - 1) * (B - 1) / B); /* a board's share of the (R-1)(B-1) residual dof */
      out->own_cv[b] = sqrt(expm1(s2));
      mean_own += s2 / B;
    }
    double sg = var_c - mean_own / B; /* a round mean holds 1/B of the boards' own variance */
    out->shared_cv = sg > 0 ? sqrt(expm1(sg)) : 0;
    out->boards = nb;
    out->rounds = R;
    free(a);
    free(cf);
  }
  for (size_t b = 0; b < nb; b++) {
    free(rk[b]);
    free(xk[b]);
  }
  free(rk);
  free(xk);
  free(mk);
  free(l);
  return st;
}

/* --- the command ------------------------------------------------------------ */

static int fail(const char *fmt, ...) PROBE_PRINTF(1, 2);
static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("hetsim-probe import: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return HS_EXIT_BADINPUT;
}

typedef struct imp_opts {
  const char *task, *times, *power, *out, *name, *board, *cpu, *arch, *notes;
  const char *run_times[PROBE_SHARED_MAX];
  size_t nrun;
  bool loadings; /* --shared loadings */
  probe_estimate busy, idle, comm;
  double threads;
} imp_opts;

static bool est_ok(const char *opt, const probe_estimate *e) {
  if (isnan(e->w) == (e->source == NULL)) return true;
  fail("%s: give the watts and %s-source TEXT together (where the figure comes from)", opt, opt);
  return false;
}

static int parse(int argc, char **argv, imp_opts *o) {
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (i + 1 >= argc) return fail("%s: needs a value", a);
    const char *v = argv[++i];
    char *end;
    double x = strtod(v, &end);
    bool num = end != v && !*end && isfinite(x);
    if (!strcmp(a, "--task")) o->task = v;
    else if (!strcmp(a, "--times")) o->times = v;
    else if (!strcmp(a, "--power")) o->power = v;
    else if (!strcmp(a, "--out")) o->out = v;
    else if (!strcmp(a, "--name")) o->name = v;
    else if (!strcmp(a, "--board")) o->board = v;
    else if (!strcmp(a, "--cpu")) o->cpu = v;
    else if (!strcmp(a, "--arch")) o->arch = v;
    else if (!strcmp(a, "--notes")) o->notes = v;
    else if (!strcmp(a, "--run-times")) {
      if (o->nrun + 1 >= PROBE_SHARED_MAX) return fail("--run-times: at most %d logs", PROBE_SHARED_MAX - 1);
      o->run_times[o->nrun++] = v;
    }
    else if (!strcmp(a, "--shared")) {
      if (strcmp(v, "equal") && strcmp(v, "loadings"))
        return fail("--shared: \"%s\" is not a model (equal: every board takes the factor alike; loadings: a "
                    "loading per board)", v);
      o->loadings = !strcmp(v, "loadings");
    }
    else if (!strcmp(a, "--busy-w-source")) o->busy.source = v;
    else if (!strcmp(a, "--idle-w-source")) o->idle.source = v;
    else if (!strcmp(a, "--comm-w-source")) o->comm.source = v;
    else if (!strcmp(a, "--busy-w") || !strcmp(a, "--idle-w") || !strcmp(a, "--comm-w") ||
             !strcmp(a, "--threads")) {
      if (!num || !(x > 0) || (!strcmp(a, "--threads") && (x != floor(x) || x > 4096)))
        return fail("%s: \"%s\" is not a %s", a, v, strcmp(a, "--threads") ? "number of watts > 0" : "thread count >= 1");
      if (!strcmp(a, "--busy-w")) o->busy.w = x;
      else if (!strcmp(a, "--idle-w")) o->idle.w = x;
      else if (!strcmp(a, "--comm-w")) o->comm.w = x;
      else o->threads = x;
    } else {
      return fail("%s: unknown option (see hetsim-probe --help)", a);
    }
  }
  return 0;
}

static hs_status load(const char *path, lrn_table *t, hs_error *err) {
  hs_status st = lrn_csv_load(path, t, err);
  if (st != HS_OK) hs_error_prefix(err, "%s", path);
  return st;
}

/* A file that cannot be read exits 1, a malformed one 2. */
static int unreadable(const hs_error *err) {
  int rc = fail("%s", err->msg);
  return err->status == HS_ENOENT || err->status == HS_EIO ? 1 : rc;
}

int probe_cmd_import(int argc, char **argv) {
  imp_opts o = {0};
  o.busy.w = o.idle.w = o.comm.w = NAN;
  int rc = parse(argc, argv, &o);
  if (rc) return rc;
  if (!o.task || !o.task[0] || strspn(o.task, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(o.task))
    return fail("--task: missing or not a task name [a-z0-9_-]+");
  if (!o.times) return fail("--times: missing (CSV with columns samples,time_s[,round][,start_s])");
  if (!o.out) return fail("--out: missing (the profile file to write)");
  if (!(o.threads >= 1)) return fail("--threads: missing (threads your trainer used; the profile records it)");
  if (!est_ok("--busy-w", &o.busy) || !est_ok("--idle-w", &o.idle) || !est_ok("--comm-w", &o.comm))
    return HS_EXIT_BADINPUT;
  if (!o.power && isnan(o.busy.w))
    return fail("--busy-w: no --power log, so busy power is not measured: give --busy-w W --busy-w-source TEXT");
  if (probe_exists(o.out))
    return fail("%s: exists (import writes a new profile; calibrate merges tasks)", o.out);
  char name[128];
  const char *b = strrchr(o.out, '/');
  b = b ? b + 1 : o.out;
  size_t l = strlen(b);
  if (l > 5 && !strcmp(b + l - 5, ".json")) l -= 5;
  snprintf(name, sizeof name, "%.*s", (int)(o.name ? strlen(o.name) : l), o.name ? o.name : b);
  if (!name[0] || name[0] == '.' || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789._-") != strlen(name))
    return fail("--name: \"%s\" must match [a-z0-9._-]+ (default: the --out file's base name)", name);

  hs_error err = {HS_OK, ""};
  lrn_table tt, pt;
  memset(&pt, 0, sizeof pt);
  if (load(o.times, &tt, &err) != HS_OK) return unreadable(&err);
  if (o.power && load(o.power, &pt, &err) != HS_OK) {
    lrn_table_fini(&tt);
    return unreadable(&err);
  }
  probe_import_result r;
  hs_status st = probe_import_compute(&tt, o.power ? &pt : NULL, &r, &err);
  lrn_table_fini(&pt);
  if (st != HS_OK) {
    lrn_table_fini(&tt);
    return fail("%s: %s", o.times, err.msg);
  }
  probe_shared_result sh;
  memset(&sh, 0, sizeof sh);
  if (o.nrun) { /* the other boards' logs of the same run: tau_cv becomes this board's own part */
    lrn_table *runs = hs_calloc(o.nrun, sizeof *runs);
    const lrn_table **logs = hs_calloc(o.nrun + 1, sizeof *logs);
    logs[0] = &tt;
    size_t loaded = 0;
    for (; loaded < o.nrun && st == HS_OK; loaded++) {
      st = load(o.run_times[loaded], &runs[loaded], &err);
      logs[loaded + 1] = &runs[loaded];
    }
    if (st == HS_OK) st = probe_import_shared_model(logs, o.nrun + 1, o.loadings, &sh, &err);
    for (size_t k = 0; k < loaded; k++) lrn_table_fini(&runs[k]);
    free(runs);
    free(logs);
    if (st != HS_OK) {
      lrn_table_fini(&tt);
      return err.status == HS_ENOENT || err.status == HS_EIO ? unreadable(&err) : fail("--run-times: %s", err.msg);
    }
    r.tau_cv = sh.own_cv[0] > 10 ? 10 : sh.own_cv[0];
  }
  lrn_table_fini(&tt);

  char src[7][700];
  const char *sources[8] = {NULL};
  int ns = 0;
  double busy = isnan(r.busy_w) ? o.busy.w : r.busy_w, idle = isnan(r.idle_w) ? o.idle.w : r.idle_w;
  if (isnan(idle))
    return fail("idle_w: the power log has fewer than two readings before the first batch or after the last, and "
                "no --idle-w estimate was given: not writing a profile");
  if (busy < idle) return fail("busy_w %g W is below idle_w %g W: not writing a profile the simulator refuses", busy, idle);
  double comm = isnan(o.comm.w) ? idle : o.comm.w;
  if (!r.overhead_fit)
    snprintf(src[ns++], sizeof src[0],
             "tau_s, tau_cv: from the user's timing log %.300s (%zu batches%s); overhead_s 0: a batch log has no "
             "per-round overhead",
             o.times, r.batches, r.rounds ? ", per-round tau_cv" : ", tau_cv from batches: an upper bound");
  else if (r.overhead_fit == 1)
    snprintf(src[ns++], sizeof src[0],
             "tau_s, tau_cv: from the user's timing log %.300s (%zu batches, per-round tau_cv); overhead_s %.6g s: "
             "the mean time of a round (first batch start to last batch end, start_s) outside its batches over %zu "
             "rounds of equal size%s",
             o.times, r.batches, r.overhead_s, r.rounds,
             r.overhead_raw < 0 ? " (the log's batches overlap: the fit was negative, written as 0)" : "");
  else
    snprintf(src[ns++], sizeof src[0],
             "tau_s, overhead_s: least squares of the %zu rounds' spans (start_s) on their sizes in %.300s: "
             "intercept %.6g s%s; tau_cv per round from the batches",
             r.rounds, o.times, r.overhead_raw,
             r.overhead_raw > 0 ? " = overhead_s, slope = tau_s"
                                : " <= 0: the board is faster on short rounds, which overhead_s >= 0 cannot say; "
                                  "overhead_s 0 and tau_s fitted through the origin");
  if (o.nrun)
    snprintf(src[ns++], sizeof src[0],
             "tau_cv %.4g: this board's own part of the per-round noise, split from a shared factor across %zu "
             "boards' logs of the same run over %zu rounds (%s; shared factor CV %.4g, range %.3f-%.3f%s%.3g); "
             "hetsim draws tau_cv per device, independently: give the shared factor to the scenario as "
             "dynamics.shared_slowdown.cv = %.4g (every device), or as a group's cv "
             "(dynamics.shared_slowdown.groups.<name>.cv) naming these boards%s",
             r.tau_cv, sh.boards, sh.rounds,
             o.loadings ? "one factor with a loading per board, principal-axis factoring" : "two-way decomposition, "
                                                                                            "every board alike",
             sh.shared_cv, sh.factor_min, sh.factor_max, o.loadings ? "; this board's loading " : "",
             o.loadings ? sh.loading[0] : 0.0, sh.shared_cv,
             o.loadings ? ", and this board's loading as dynamics.devices.<name>.shared_loading" : "");
  if (isnan(r.busy_w)) snprintf(src[ns++], sizeof src[0], "busy_w %g W: estimate, %.500s", busy, o.busy.source);
  else snprintf(src[ns++], sizeof src[0], "busy_w %.4g W: the power log %.300s over the batches' windows", busy, o.power);
  if (isnan(r.idle_w)) snprintf(src[ns++], sizeof src[0], "idle_w %g W: estimate, %.500s", idle, o.idle.source);
  else snprintf(src[ns++], sizeof src[0], "idle_w %.4g W: mean of %zu power-log readings outside the batches", idle, r.idle_readings);
  if (isnan(o.comm.w))
    snprintf(src[ns++], sizeof src[0], "comm_w = idle_w (%g W): assumption; the log does not cover communication", comm);
  else snprintf(src[ns++], sizeof src[0], "comm_w %g W: estimate, %.500s", comm, o.comm.source);
  for (int k = 0; k < ns; k++) sources[k] = src[k];

  probe_sysinfo si;
  probe_sysinfo_read("/", &si);
  time_t now = time(NULL);
  struct tm tmv;
  gmtime_r(&now, &tmv);
  char date[16];
  strftime(date, sizeof date, "%Y-%m-%d", &tmv);
  probe_task_result res;
  memset(&res, 0, sizeof res);
  res.task = o.task;
  res.tau_s = r.tau_s;
  res.tau_cv = r.tau_cv;
  res.busy_w = busy;
  res.overhead_s = r.overhead_s;
  res.batch = r.batch ? r.batch : 1;
  res.threads = (unsigned)o.threads;
  res.runs = res.runs_kept = (unsigned)(r.rounds ? r.rounds : 1);
  res.energy_measured = !isnan(r.busy_w);
  snprintf(res.notes, sizeof res.notes, "imported with hetsim-probe import from the user's own log%s%s",
           o.notes ? "; " : "", o.notes ? o.notes : "");
  char sensor[400];
  snprintf(sensor, sizeof sensor, "user power log %.300s", o.power ? o.power : "");
  probe_profile_in in = {name, o.board ? o.board : si.board, o.arch ? o.arch : si.arch,
                         o.cpu ? o.cpu : si.cpu, "not recorded (imported from a log)", date, idle, comm,
                         "mixed", /* timing from the log; energy measured or estimated */
                         res.energy_measured ? sensor : NULL,
                         res.energy_measured ? "whatever the user's logger measured (as stated by the user)" : NULL,
                         0, sources, NULL, &res};
  char *text = probe_profile_render(&in, NULL, 0, &err);
  if (!text) return fail("%s: %s", o.out, err.msg);
  st = probe_write_atomic(o.out, text, strlen(text), &err);
  free(text);
  if (st != HS_OK) {
    fprintf(stderr, "hetsim-probe import: %s\n", err.msg);
    return 1;
  }
  printf("wrote %s: task %s: tau_s %.4g s/sample (cv %.3f), busy_w %.3g W (%s), idle_w %.3g W (%s)\n", o.out,
         o.task, r.tau_s, r.tau_cv, busy, isnan(r.busy_w) ? "estimate" : "from the log", idle,
         isnan(r.idle_w) ? "estimate" : "from the log");
  if (r.overhead_fit)
    printf("overhead_s %.6g s per round (fitted %.6g s, %s)\n", r.overhead_s, r.overhead_raw,
           r.overhead_fit == 1 ? "rounds of one size: span - batches" : "least squares of span on size");
  if (o.nrun) {
    printf("noise: own tau_cv %.4g, shared factor CV %.4g across %zu boards over %zu rounds (factor %.3f-%.3f)\n",
           r.tau_cv, sh.shared_cv, sh.boards, sh.rounds, sh.factor_min, sh.factor_max);
    /* the scenario key the shared part goes into (sim/doc/dynamics.md) */
    printf("scenario: \"dynamics\": {\"shared_slowdown\": {\"cv\": %.4g}}\n", sh.shared_cv);
    if (o.loadings) {
      printf("loadings:");
      for (size_t k = 0; k < sh.boards; k++)
        printf(" %s=%.4g", k ? o.run_times[k - 1] : o.times, sh.loading[k]);
      printf("\nscenario: this board: \"dynamics\": {\"devices\": {\"NAME\": {\"shared_loading\": %.4g}}}\n",
             sh.loading[0]);
    }
  }
  return 0;
}
