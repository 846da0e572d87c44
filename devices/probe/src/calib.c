/* calib.c: one calibration of one task: idle baseline, warm-up, timed runs,
 * loss curve, statistics.
 *
 * A "run" is one simulated round: prepare the sample order (index copy),
 * train n samples, evaluate the held-out loss. Only the training part is
 * timed for tau_s; the rest is what the round spends outside training and is
 * reported as overhead_s. The model keeps training across runs, so the loss
 * curve (held-out loss after each run, against cumulative samples seen) is
 * one continuous training from initialisation.
 * Statistics: tau_s is the MEAN per-sample time of the kept runs (the
 * simulator draws lognormal times whose mean is tau_s); tau_cv their
 * coefficient of variation; median and MAD go in the notes. Runs during which
 * a throttle counter moved are flagged and left out (unless all were).
 * busy_w is the median over runs of energy / training time. */
#include "base/hs_rng.h"
#include "probe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void probe_task_result_fini(probe_task_result *r) {
  free(r->loss_samples);
  free(r->loss_values);
  r->loss_samples = r->loss_values = NULL;
  r->loss_n = 0;
}

static uint64_t cal_next(uint64_t *s) { return hs_splitmix64_step(s); }

typedef struct {
  uint32_t *perm;
  size_t n, pos;
  uint64_t rng;
} cal_order;

static void cal_shuffle(cal_order *o) {
  for (size_t i = o->n; i > 1; i--) {
    size_t j = (size_t)(cal_next(&o->rng) % i);
    uint32_t t = o->perm[i - 1];
    o->perm[i - 1] = o->perm[j];
    o->perm[j] = t;
  }
  o->pos = 0;
}

/* The next n sample indices (reshuffling at each epoch end) into out. */
static void cal_take(cal_order *o, uint32_t *out, size_t n) {
  for (size_t k = 0; k < n; k++) {
    if (o->pos == o->n) cal_shuffle(o);
    out[k] = o->perm[o->pos++];
  }
}

static void cal_sleep(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static void cal_point(probe_task_result *r, double samples, double loss) {
  r->loss_samples = hs_realloc(r->loss_samples, (r->loss_n + 1) * sizeof(double));
  r->loss_values = hs_realloc(r->loss_values, (r->loss_n + 1) * sizeof(double));
  r->loss_samples[r->loss_n] = samples;
  r->loss_values[r->loss_n] = loss;
  r->loss_n++;
}

hs_status probe_calibrate(const probe_calib_cfg *cfg, probe_task_result *res, double *idle_w, hs_error *err) {
  memset(res, 0, sizeof *res);
  *idle_w = NAN;
  void *st = NULL;
  hs_status s = cfg->trainer->load(&cfg->train, &st, err);
  if (s != HS_OK) return s;
  const lrn_trainer_type *tr = cfg->trainer;
  size_t ntrain = tr->train_count(st);
  if (!cfg->quiet) fprintf(stderr, "hetsim-probe: %s\n", tr->describe(st));
  char load0[64] = "n/a", load1[64] = "n/a";
  char *lp = probe_path(cfg->root, "/proc/loadavg");
  hs_error lerr;
  probe_read_line(lp, load0, sizeof load0, &lerr);
  lrn_pool *pool = lrn_pool_create(cfg->threads ? cfg->threads : 1);
  probe_sampler *smp = probe_sampler_create(cfg->sensor, cfg->root, cfg->hz);
  bool has_sensor = cfg->sensor && cfg->sensor->type;
  const char *sid = has_sensor ? cfg->sensor->type->id(cfg->sensor->state) : "none";
  unsigned runs = cfg->runs ? cfg->runs : 5;
  double *t = hs_calloc(runs, sizeof *t), *ovh = hs_calloc(runs, sizeof *ovh);
  probe_mark *ma = hs_calloc(runs, sizeof *ma), *mb = hs_calloc(runs, sizeof *mb);
  bool *thr = hs_calloc(runs, sizeof *thr);
  double *temp = hs_calloc(runs, sizeof *temp);
  char failnote[HS_ERROR_MSG_MAX + 64] = "";

  /* Idle baseline, before anything warms the chip. */
  probe_mark ia, ib;
  if (has_sensor && cfg->idle_s > 0) {
    hs_error e1 = {HS_OK, ""};
    if (!cfg->quiet) fprintf(stderr, "hetsim-probe: idle baseline for %.1f s (keep the board quiet)\n", cfg->idle_s);
    bool ok = probe_sampler_mark(smp, &ia, &e1) == HS_OK;
    cal_sleep(cfg->idle_s);
    ok = ok && probe_sampler_mark(smp, &ib, &e1) == HS_OK;
    double e = NAN;
    if (ok && probe_sampler_energy(smp, &ia, &ib, &e, &e1) == HS_OK && e > 0)
      *idle_w = e / (cfg->sensor->type->window ? ib.t_real - ia.t_real : ib.t_mono - ia.t_mono);
    else if (!cfg->quiet) fprintf(stderr, "hetsim-probe: warning: idle baseline not measured: %s\n", e1.msg);
  }

  cal_order ord = {hs_malloc(ntrain * sizeof(uint32_t)), ntrain, 0, cfg->train.seed ^ 0x5eedull};
  for (size_t i = 0; i < ntrain; i++) ord.perm[i] = (uint32_t)i;
  cal_shuffle(&ord);
  size_t batch = cfg->batch ? cfg->batch : 32;
  size_t warm = cfg->warmup ? cfg->warmup : 20 * batch;
  double seen = 0;
  cal_point(res, 0, tr->eval_loss(st));
  uint32_t *idx = hs_malloc(warm * sizeof *idx);
  /* Warm-up: at least `warm` samples and, unless --warmup fixed it, at least
   * 0.5 s, so caches, page tables and clocks settle even for fast tasks. */
  double w0 = probe_now_mono(), wt = 0;
  size_t warmed = 0;
  do {
    cal_take(&ord, idx, warm);
    tr->train(st, idx, warm, batch, pool);
    warmed += warm;
    wt = probe_now_mono() - w0;
  } while (!cfg->warmup && wt < 0.5 && warmed < 100 * warm);
  warm = warmed;
  seen += (double)warm;
  cal_point(res, seen, tr->eval_loss(st));
  size_t n = cfg->samples;
  if (!n) { /* size runs from the warm-up so each lasts about run_s */
    double per = wt / (double)warm, want = (cfg->run_s > 0 ? cfg->run_s : 3.0) / per;
    n = (size_t)(want / (double)batch + 0.5) * batch;
    if (n < batch) n = batch;
    if (n > 50 * ntrain) n = 50 * ntrain;
  }
  idx = hs_realloc(idx, n * sizeof *idx);
  if (!cfg->quiet)
    fprintf(stderr, "hetsim-probe: warm-up %zu samples in %.3f s (discarded); %u runs of %zu samples, batch %zu, %u thread%s\n",
            warm, wt, runs, n, batch, lrn_pool_size(pool), lrn_pool_size(pool) == 1 ? "" : "s");
  bool warned = false;
  for (unsigned r = 0; r < runs; r++) {
    probe_sampler_max_temp_c(smp, true);
    double r0 = probe_now_mono();
    cal_take(&ord, idx, n);
    hs_error e1 = {HS_OK, ""};
    probe_sampler_mark(smp, &ma[r], &e1);
    double loss_train = tr->train(st, idx, n, batch, pool);
    probe_sampler_mark(smp, &mb[r], &e1);
    seen += (double)n;
    double l = tr->eval_loss(st);
    double r1 = probe_now_mono();
    cal_point(res, seen, l);
    t[r] = mb[r].t_mono - ma[r].t_mono;
    ovh[r] = (ma[r].t_mono - r0) + (r1 - mb[r].t_mono);
    thr[r] = ma[r].throttle >= 0 && mb[r].throttle > ma[r].throttle;
    temp[r] = probe_sampler_max_temp_c(smp, false);
    if (!cfg->quiet)
      fprintf(stderr, "hetsim-probe: run %u/%u: %.3f s, %.3g s/sample, train loss %.4f, held-out loss %.4f%s\n", r + 1,
              runs, t[r], t[r] / (double)n, loss_train, l, thr[r] ? " THROTTLED" : "");
    hs_error fe;
    if (!warned && has_sensor && probe_sampler_failed(smp, &fe)) {
      warned = true;
      snprintf(failnote, sizeof failnote, "sensor failed during run %u: %s", r + 1, fe.msg);
      fprintf(stderr,
              "hetsim-probe: warning: %s; continuing with time only, the runs measured before keep their energy\n",
              failnote);
    }
  }
  free(idx);
  free(ord.perm);

  /* Other processes compete for the cores: say how busy the machine was. */
  probe_read_line(lp, load1, sizeof load1, &lerr);
  free(lp);

  /* Statistics over kept runs. */
  unsigned nthr = 0;
  for (unsigned r = 0; r < runs; r++) nthr += thr[r];
  bool keep_all = nthr == runs;
  double *kt = hs_calloc(runs, sizeof *kt), *kp = hs_calloc(runs, sizeof *kp);
  unsigned nk = 0, ne = 0;
  for (unsigned r = 0; r < runs; r++) {
    if (thr[r] && !keep_all) continue;
    kt[nk++] = t[r] / (double)n;
    double e = NAN;
    hs_error e2 = {HS_OK, "no positive energy reading"};
    /* A meter log is integrated over the wall-clock window: divide by that window. */
    double dur = has_sensor && cfg->sensor->type->window ? mb[r].t_real - ma[r].t_real : t[r];
    if (has_sensor && probe_sampler_energy(smp, &ma[r], &mb[r], &e, &e2) == HS_OK && e > 0 && dur > 0)
      kp[ne++] = e / dur;
    else if (has_sensor && !failnote[0])
      snprintf(failnote, sizeof failnote, "run %u energy not measured: %s", r + 1, e2.msg);
  }
  res->task = tr->name;
  res->tau_s = probe_mean(kt, nk);
  res->tau_median_s = probe_median(kt, nk);
  res->tau_mad_s = probe_mad(kt, nk);
  res->tau_cv = probe_cv(kt, nk);
  res->overhead_s = probe_median(ovh, runs);
  res->busy_w = ne ? probe_median(kp, ne) : NAN;
  res->energy_measured = ne > 0;
  res->batch = (unsigned)batch;
  res->threads = lrn_pool_size(pool);
  res->runs = runs;
  res->runs_kept = nk;
  res->runs_throttled = nthr;
  res->runs_with_energy = ne;
  double tmax = NAN;
  for (unsigned r = 0; r < runs; r++)
    if (!isnan(temp[r]) && (isnan(tmax) || temp[r] > tmax)) tmax = temp[r];
  char tnote[64];
  if (isnan(tmax)) snprintf(tnote, sizeof tnote, "no thermal zone");
  else snprintf(tnote, sizeof tnote, "max %.1f C", tmax);
  snprintf(res->notes, sizeof res->notes,
           "%s: %u runs of %zu samples (warm-up %zu discarded), batch %zu, %u thread(s); tau_s = mean of %u kept runs; "
           "per-sample median %.4g s, MAD %.3g s; %u run(s) throttled%s (%s); %.300s; overhead_s = median per-round time "
           "outside training (sample order + held-out loss); /proc/loadavg before \"%.30s\", after \"%.30s\"; sensor %.60s, "
           "%u run(s) with energy, %zu readings%s%.200s",
           tr->name, runs, n, warm, batch, res->threads, nk, res->tau_median_s, res->tau_mad_s, nthr,
           probe_throttle_count(cfg->root) < 0 && probe_rpi_throttled(cfg->root) < 0 ? " (no throttle counters here)" : "", tnote, tr->describe(st), load0, load1,
           sid, ne,
           probe_sampler_count(smp), failnote[0] ? "; " : "", failnote);
  free(kt);
  free(kp);
  free(t);
  free(ovh);
  free(ma);
  free(mb);
  free(thr);
  free(temp);
  probe_sampler_destroy(smp);
  lrn_pool_destroy(pool);
  tr->destroy(st);
  /* A loss that is not a number is a model that diverged, nearly always at a
   * too large --lr: no profile can carry it (the loader wants finite losses). */
  for (size_t k = 0; k < res->loss_n; k++) {
    if (isfinite(res->loss_values[k])) continue;
    hs_status bad = hs_error_set(err, HS_EINVAL,
                                 "%s: held-out loss %g after %.0f samples: training diverged (try a smaller "
                                 "--lr)",
                                 tr->name, res->loss_values[k], res->loss_samples[k]);
    probe_task_result_fini(res);
    return bad;
  }
  return HS_OK;
}
