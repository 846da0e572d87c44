/* sustain.c: `calibrate --sustain-s S`: a sustained run that records the
 * board's temperature (thermal zones), CPU frequency (cpufreq) and throughput
 * over time while it trains, and the fit of the profile's thermal block
 * (hs_profile.h: hs_thermal_profile) from that record.
 *
 * The fit (probe_thermal_fit, pure, tested on series drawn from the closed
 * form):
 * - levels: the distinct frequencies seen (within 1 %), fastest first; a
 *   level's speed is its median throughput over level 0's; its busy factor,
 *   without a power series, is idle/busy + (1 - idle/busy) x f_k/f_0 (dynamic
 *   power proportional to the clock: an ASSUMPTION, written into the sources);
 * - trip_c[k]: the median temperature at the steps from level k-1 down to k;
 *   recover_c[k]: at the steps back up (when never seen: trip - 3 C, an
 *   ASSUMPTION, said so); levels whose points do not ascend are dropped;
 * - R and C: T(t) = a + b exp(-t/tau) fitted by least squares (a and b in
 *   closed form for each tau of a log grid, then a golden-section refinement)
 *   to the unthrottled heating from the start; T_inf = a, and with the idle
 *   temperature measured before the run, R = (T_inf - T_idle) / (P_busy -
 *   P_idle), ambient = T_idle - R P_idle, C = tau / R.
 * The record: one point per chunk of batches (about 0.25 s), O(S / 0.25 s)
 * memory. Rejected: fitting R and C on the throttled part too (its power is
 * not measured per level here, so it would only add the busy-factor guess). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

double probe_cpufreq_khz(const char *root) {
  char *p = probe_path(root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq");
  int64_t v = 0;
  hs_error ig;
  double f = probe_read_i64(p, &v, &ig) == HS_OK && v > 0 ? (double)v : NAN;
  free(p);
  return f;
}

static int cmp_desc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

/* Least squares of T = a + b e^{-t/tau} for one tau: the residual sum. */
static double sse_at(const double *t, const double *y, size_t n, double tau, double *a, double *b) {
  double se = 0, see = 0, sy = 0, sey = 0;
  for (size_t i = 0; i < n; i++) {
    double e = exp(-t[i] / tau);
    se += e;
    see += e * e;
    sy += y[i];
    sey += e * y[i];
  }
  double det = (double)n * see - se * se;
  if (!(fabs(det) > 1e-300)) return INFINITY;
  *b = ((double)n * sey - se * sy) / det;
  *a = (sy - *b * se) / (double)n;
  double s = 0;
  for (size_t i = 0; i < n; i++) {
    double r = y[i] - (*a + *b * exp(-t[i] / tau));
    s += r * r;
  }
  return s;
}

static double fit_tau(const double *t, const double *y, size_t n, double *a, double *b) {
  double best = INFINITY, bt = 1;
  for (int k = 0; k <= 400; k++) {
    double tau = pow(10.0, -1 + 6.0 * k / 400); /* 0.1 s .. 10^5 s */
    double s = sse_at(t, y, n, tau, a, b);
    if (s < best) {
      best = s;
      bt = tau;
    }
  }
  double lo = log(bt) - 6.0 * log(10.0) / 400, hi = log(bt) + 6.0 * log(10.0) / 400;
  const double g = 0.6180339887498949;
  for (int it = 0; it < 80; it++) {
    double m1 = hi - g * (hi - lo), m2 = lo + g * (hi - lo);
    if (sse_at(t, y, n, exp(m1), a, b) < sse_at(t, y, n, exp(m2), a, b)) hi = m2;
    else lo = m1;
  }
  double tau = exp(0.5 * (lo + hi));
  sse_at(t, y, n, tau, a, b);
  return tau;
}

hs_status probe_thermal_fit(const probe_thermal_series *s, double temp_idle_c, double idle_w, double busy_w,
                            probe_thermal_out *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  size_t n = s->n;
  if (n < 8) return hs_error_set(err, HS_EINVAL, "sustained run: %zu points, need at least 8 (run longer)", n);
  if (!(busy_w > idle_w) || !(idle_w > 0))
    return hs_error_set(err, HS_EINVAL, "sustained run: busy power %g W must exceed idle power %g W > 0", busy_w, idle_w);
  /* Levels from the frequencies seen. */
  double *f = hs_calloc(n, sizeof *f), lv[PROBE_THERMAL_LEVELS];
  size_t nf = 0, nl = 0;
  for (size_t i = 0; i < n; i++)
    if (s->freq_khz[i] > 0) f[nf++] = s->freq_khz[i];
  qsort(f, nf, sizeof *f, cmp_desc);
  for (size_t i = 0; i < nf && nl < PROBE_THERMAL_LEVELS; i++)
    if (nl == 0 || f[i] < 0.99 * lv[nl - 1]) lv[nl++] = f[i];
  free(f);
  if (nl == 0) nl = 1, lv[0] = NAN; /* no cpufreq: one level */
  int *lev = hs_calloc(n, sizeof *lev);
  for (size_t i = 0; i < n; i++) {
    size_t k = 0;
    for (size_t j = 1; j < nl; j++)
      if (fabs(s->freq_khz[i] - lv[j]) < fabs(s->freq_khz[i] - lv[k])) k = j;
    lev[i] = isnan(s->freq_khz[i]) ? 0 : (int)k;
  }
  /* Heating: from the start while unthrottled. */
  size_t h = 0;
  while (h < n && lev[h] == 0) h++;
  hs_status st = HS_OK;
  if (h < 5 || s->temp_c[h - 1] - s->temp_c[0] < 2) {
    st = hs_error_set(err, HS_EINVAL,
                      "sustained run: %zu unthrottled points heating %.1f C: too little to fit the RC (run longer, or "
                      "start from a cool board)",
                      h, h ? s->temp_c[h - 1] - s->temp_c[0] : 0.0);
    goto done;
  }
  double a, b, tau = fit_tau(s->t_s, s->temp_c, h, &a, &b);
  if (!(a > temp_idle_c) || !isfinite(tau)) {
    st = hs_error_set(err, HS_EINVAL, "sustained run: the heating curve settles at %.1f C, not above the idle %.1f C",
                      a, temp_idle_c);
    goto done;
  }
  out->r_c_per_w = (a - temp_idle_c) / (busy_w - idle_w);
  out->ambient_c = temp_idle_c - out->r_c_per_w * idle_w;
  out->c_j_per_c = tau / out->r_c_per_w;
  out->t_inf_c = a;
  /* Levels, their speeds and their trip and recover points. */
  double base_rate = NAN;
  out->nlevels = 1;
  out->speed[0] = out->busy_factor[0] = 1;
  out->trip_c[0] = out->recover_c[0] = NAN;
  double *buf = hs_calloc(n, sizeof *buf);
  for (size_t k = 0; k < nl; k++) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
      if (lev[i] == (int)k && s->rate[i] > 0) buf[m++] = s->rate[i];
    double rate = m ? probe_median(buf, m) : NAN;
    if (k == 0) {
      base_rate = rate;
      continue;
    }
    size_t nt = 0, nr = 0;
    double trips[256], recs[256];
    for (size_t i = 1; i < n; i++) {
      if (lev[i] == (int)k && lev[i - 1] == (int)k - 1 && nt < 256) trips[nt++] = s->temp_c[i];
      if (lev[i] == (int)k - 1 && lev[i - 1] == (int)k && nr < 256) recs[nr++] = s->temp_c[i];
    }
    if (!nt) break; /* never stepped down into it: the levels stop here */
    size_t o = out->nlevels;
    double sp = !isnan(rate) && base_rate > 0 ? rate / base_rate : lv[k] / lv[0];
    if (sp > out->speed[o - 1]) sp = out->speed[o - 1];
    double trip = probe_median(trips, nt), rec = nr ? probe_median(recs, nr) : trip - 3;
    if (rec >= trip) rec = trip - 0.5;
    if (o > 1 && (!(trip > out->trip_c[o - 1]) || !(rec > out->recover_c[o - 1]))) break;
    out->speed[o] = sp;
    out->busy_factor[o] = idle_w / busy_w + (1 - idle_w / busy_w) * lv[k] / lv[0];
    out->trip_c[o] = trip;
    out->recover_c[o] = rec;
    out->recover_seen[o] = nr > 0;
    out->nlevels++;
  }
  free(buf);
done:
  free(lev);
  return st;
}

char *probe_thermal_attach(const char *profile_text, const probe_thermal_out *th, const char *what, hs_error *err) {
  probe_json *root = probe_json_parse(profile_text, strlen(profile_text), err);
  if (!root) return NULL;
  probe_json *b = probe_json_new(PJ_OBJ);
  probe_json_set(b, "ambient_c", probe_json_num(th->ambient_c));
  probe_json_set(b, "r_c_per_w", probe_json_num(th->r_c_per_w));
  probe_json_set(b, "c_j_per_c", probe_json_num(th->c_j_per_c));
  probe_json *lv = probe_json_new(PJ_ARR);
  bool assumed = false;
  for (size_t k = 0; k < th->nlevels; k++) {
    probe_json *l = probe_json_new(PJ_OBJ);
    probe_json_set(l, "speed", probe_json_num(th->speed[k]));
    probe_json_set(l, "busy_factor", probe_json_num(th->busy_factor[k]));
    if (k) {
      probe_json_set(l, "trip_c", probe_json_num(th->trip_c[k]));
      probe_json_set(l, "recover_c", probe_json_num(th->recover_c[k]));
      assumed |= !th->recover_seen[k];
    }
    probe_json_push(lv, l);
  }
  probe_json_set(b, "levels", lv);
  probe_json *src = probe_json_new(PJ_ARR);
  char *s1 = probe_xasprintf("R, C, ambient: fitted by hetsim-probe to the unthrottled heating of a sustained run "
                             "(%s); T_inf %.1f C, tau %.0f s",
                             what, th->t_inf_c, th->r_c_per_w * th->c_j_per_c);
  probe_json_push(src, probe_json_str(s1));
  free(s1);
  probe_json_push(src, probe_json_str("levels, speed and trip_c: measured (cpufreq steps, throughput, thermal zones)"));
  probe_json_push(src, probe_json_str("busy_factor: ASSUMPTION, dynamic power proportional to the clock "
                                      "(idle/busy + (1 - idle/busy) f_k/f_0); not measured per level"));
  if (assumed)
    probe_json_push(src, probe_json_str("recover_c = trip_c - 3 C where no recovery was seen: ASSUMPTION"));
  probe_json_set(b, "sources", src);
  probe_json_set(root, "thermal", b);
  char *text = NULL;
  if (probe_profile_check(root, err) == HS_OK) text = probe_json_write(root);
  else hs_error_prefix(err, "thermal block");
  probe_json_destroy(root);
  return text;
}

/* --- the sustained run ------------------------------------------------------ */

void probe_thermal_series_fini(probe_thermal_series *s) {
  free(s->t_s);
  free(s->temp_c);
  free(s->freq_khz);
  free(s->rate);
  memset(s, 0, sizeof *s);
}

hs_status probe_sustain(const probe_calib_cfg *cfg, double sustain_s, probe_thermal_series *s, double *temp_idle_c,
                        hs_error *err) {
  memset(s, 0, sizeof *s);
  *temp_idle_c = probe_max_temp_c(cfg->root);
  if (isnan(*temp_idle_c))
    return hs_error_set(err, HS_ENOENT, "--sustain-s: no thermal zone under %s/sys/class/thermal", cfg->root);
  void *st = NULL;
  hs_status rc = cfg->trainer->load(&cfg->train, &st, err);
  if (rc != HS_OK) return rc;
  const lrn_trainer_type *tr = cfg->trainer;
  size_t ntrain = tr->train_count(st), batch = cfg->batch ? cfg->batch : 32;
  lrn_pool *pool = lrn_pool_create(cfg->threads ? cfg->threads : 1);
  uint32_t *idx = hs_malloc(batch * sizeof *idx);
  size_t cap = 64, n = 0, next = 0;
  double *t = hs_malloc(cap * sizeof *t), *temp = hs_malloc(cap * sizeof *temp);
  double *freq = hs_malloc(cap * sizeof *freq), *rate = hs_malloc(cap * sizeof *rate);
  if (!cfg->quiet) fprintf(stderr, "hetsim-probe: sustained run for %.0f s from %.1f C\n", sustain_s, *temp_idle_c);
  double t0 = probe_now_mono(), last = t0;
  size_t done = 0;
  while (last - t0 < sustain_s) {
    for (size_t k = 0; k < batch; k++) idx[k] = (uint32_t)(next++ % ntrain);
    tr->train(st, idx, batch, batch, pool);
    done += batch;
    double now = probe_now_mono();
    if (now - last < 0.25) continue; /* one point per chunk of about 0.25 s */
    if (n == cap) {
      cap *= 2;
      t = hs_realloc(t, cap * sizeof *t);
      temp = hs_realloc(temp, cap * sizeof *temp);
      freq = hs_realloc(freq, cap * sizeof *freq);
      rate = hs_realloc(rate, cap * sizeof *rate);
    }
    t[n] = now - t0;
    temp[n] = probe_max_temp_c(cfg->root);
    freq[n] = probe_cpufreq_khz(cfg->root);
    rate[n] = (double)done / (now - last);
    n++;
    done = 0;
    last = now;
  }
  free(idx);
  lrn_pool_destroy(pool);
  tr->destroy(st);
  s->n = n;
  s->t_s = t;
  s->temp_c = temp;
  s->freq_khz = freq;
  s->rate = rate;
  return HS_OK;
}
