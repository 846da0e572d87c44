/* board.c: `hetsim-probe board`, one board of a real run. It connects to
 * its port on the server (loopback only), says its name, is told its place
 * in the run (WELCOME: task, seed, batch, participants, its index), loads its
 * data and the learner (hetsim::learn, the trainers the harness calibrates
 * with) with the same seed and IID partition as every other board, opens its
 * power sensor and says READY. Then it answers what the server sends; it
 * never asks which regime runs (the messages say what to do):
 *   ROUND (pma, fedasync): the global model and an allocation; it trains that
 *   many samples of its own part (draw key = ROUND's draw=, the round for
 *   pma, its update count for fedasync, so a rerun trains the same samples)
 *   and sends the trained model back (RESULT) with the instants it stamped
 *   (model received, training start and end, upload start) on
 *   CLOCK_MONOTONIC and the training energy;
 *   STEP (ddp): applies the previous step's reduced gradient to its model
 *   replica, computes the mean gradient of its batch at it and sends it
 *   (GRAD) with the replica's hash, the instants and the energy (ddp_step). 
 *
 * Energy, honestly: with a sensor (rapl, hwmon, pi5-pmic, meter: probe's
 * sensors) the training window's energy is measured through the sampler and
 * the record says "measured:<sensor>"; without one (every VM) it is the
 * profile's busy_w x train_s and the record says "stated:<profile> busy_w W";
 * without a profile, 0 and "none". Never a measured label on a stated figure.
 * Exit: 0 after BYE; 2 bad input (options, a refused HELLO, a sensor that was
 * named and does not work); 1 a system failure (no server, a dropped
 * connection, a timeout, an ERROR from the server). */
#include "probe_cluster.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "learn/hs_learn.h"

static int bsay(const char *name, int rc, const char *fmt, ...) PROBE_PRINTF(3, 4);
static int bsay(const char *name, int rc, const char *fmt, ...) {
  char who[128];
  snprintf(who, sizeof who, "board %s", name ? name : "?");
  va_list ap;
  va_start(ap, fmt);
  rc = probe_vsay(rc, who, fmt, ap);
  va_end(ap);
  return rc;
}

/* Send ERROR with a reason (best effort) before giving up. */
static void tell(int fd, const char *why) {
  char t[700];
  snprintf(t, sizeof t, "reason=%.600s\n", why);
  hs_error e = {HS_OK, ""};
  probe_wire_send(fd, PROBE_MSG_ERROR, t, NULL, 0, 1, &e);
}

/* ddp: the board's model replica, its optimiser state and its step buffers. */
typedef struct board_ddp {
  size_t np, mb;
  bool init;
  float *params;
  double *g64;
  unsigned char *wire;
  hs_learn_optstate *opt;
  hs_learn_grad *grad;
  uint32_t *idx;
  size_t idx_cap;
} board_ddp;

static board_ddp *ddp_create(const hs_learner *l, size_t np, size_t mb) {
  board_ddp *d = hs_calloc(1, sizeof *d);
  d->np = np;
  d->mb = mb;
  d->params = hs_calloc(np, sizeof *d->params);
  d->g64 = hs_calloc(np, sizeof *d->g64);
  d->wire = hs_calloc(mb, 1);
  d->opt = hs_learn_optstate_for(l);
  d->grad = hs_learn_grad_create(l);
  return d;
}

static void ddp_destroy(board_ddp *d) {
  if (!d) return;
  free(d->params);
  free(d->g64);
  free(d->wire);
  free(d->idx);
  hs_learn_optstate_destroy(d->opt);
  hs_learn_grad_destroy(d->grad);
  free(d);
}

/* One DDP step (STEP -> GRAD). The first STEP starts the replica from the
 * learner's initial model (the server's: same task and seed); a STEP with a
 * binary part carries the previous step's reduced gradient, applied with this
 * replica's optimiser before anything else, so every replica makes the same
 * update. Then the board draws its batch (draw key round << 32 | step, as the
 * simulator's DDP learning), computes the mean gradient of it at the replica
 * and sends it (float32, zero-padded to model_bytes) with the replica's hash.
 * final=1: apply, reply with the hash only. Returns 0 or an exit status with
 * err set. */
static int ddp_step(board_ddp *d, hs_learner *l, int fd, const probe_msg *m, double t_dl, unsigned index,
                    probe_sampler *smp, double busy_w, const probe_board_cfg *cfg, hs_error *err) {
  double round = -1, step = -1, samples = -1, final = 0;
  hs_status st = probe_kv_num(m->text, "round", &round, err);
  if (st == HS_OK) st = probe_kv_num(m->text, "step", &step, err);
  if (st == HS_OK) st = probe_kv_num(m->text, "samples", &samples, err);
  if (st == HS_OK) st = probe_kv_num(m->text, "final", &final, err);
  if (st == HS_OK && (!(samples >= 0) || (m->bin_len != 0 && m->bin_len != d->mb) || (!d->init && m->bin_len)))
    st = hs_error_set(err, HS_EINVAL, "STEP: %zu gradient bytes (expected 0 or %zu), %g samples", m->bin_len, d->mb,
                      samples);
  if (st != HS_OK) {
    hs_error_prefix(err, "STEP");
    return HS_EXIT_BADINPUT;
  }
  if (!d->init) {
    hs_learn_init_params(l, d->params);
    d->init = true;
  }
  if (m->bin_len) {
    const float *g = (const float *)(const void *)m->bin;
    for (size_t k = 0; k < d->np; k++) d->g64[k] = g[k];
    hs_learn_opt_apply(d->opt, d->params, d->g64, d->np);
  }
  uint64_t hash = probe_model_hash(d->params, d->np * sizeof(float));
  double t0 = probe_now_mono(), t1 = t0, ej = 0, loss = 0;
  size_t bytes = 0;
  if (final == 0) {
    size_t n = (size_t)samples;
    memset(d->wire, 0, d->mb);
    probe_mark m0, m1;
    if (smp) probe_sampler_mark(smp, &m0, err);
    if (n > 0) {
      if (d->idx_cap < n) {
        d->idx = hs_reallocarray(d->idx, n, sizeof *d->idx);
        d->idx_cap = n;
      }
      hs_learn_draw(l, index, (uint64_t)round << 32 | (uint64_t)step, n, d->idx);
      loss = hs_learn_batch_grad(l, d->params, d->idx, n, d->grad);
      const double *gv = hs_learn_grad_values(d->grad);
      float *w = (float *)(void *)d->wire;
      for (size_t k = 0; k < d->np; k++) w[k] = (float)gv[k];
    }
    if (smp) probe_sampler_mark(smp, &m1, err);
    t1 = probe_now_mono();
    if (smp && n > 0) {
      if (probe_sampler_energy(smp, &m0, &m1, &ej, err) != HS_OK || !(ej >= 0)) {
        hs_error_prefix(err, "round %.0f step %.0f: the power sensor failed", round, step);
        return 1;
      }
    } else if (n > 0 && !isnan(busy_w)) {
      ej = busy_w * (t1 - t0);
    }
    bytes = d->mb;
  }
  char res[700];
  double ul0 = probe_now_mono();
  snprintf(res, sizeof res,
           "round=%.0f\nstep=%.0f\nsamples=%.0f\nfinal=%.0f\nhash=%016llx\ndl_end=%.17g\ntrain0=%.17g\ntrain1=%.17g\n"
           "ul0=%.17g\nenergy_j=%.17g\nloss=%.17g\n",
           round, step, samples, final, (unsigned long long)hash, t_dl, t0, t1, ul0, ej, loss);
  probe_wire_end e = probe_wire_send(fd, PROBE_MSG_GRAD, res, bytes ? d->wire : NULL, bytes, cfg->io_timeout_s, err);
  if (e != PROBE_WIRE_OK) {
    hs_error_prefix(err, "round %.0f step %.0f", round, step);
    return 1;
  }
  return 0;
}

int probe_board(const probe_board_cfg *cfg) {
  const char *nm = cfg->name;
  hs_error err = {HS_OK, ""};
  int fd = probe_connect(cfg->addr, cfg->port, cfg->connect_timeout_s, &err);
  if (fd < 0) return bsay(nm, err.status == HS_EINVAL ? HS_EXIT_BADINPUT : 1, "%s", err.msg);
  int rc = 0;
  hs_learner *l = NULL;
  probe_sensor sensor = {NULL, NULL};
  probe_sampler *smp = NULL;
  float *start = NULL, *out = NULL;
  unsigned char *wire = NULL;
  probe_msg m = {0};
  board_ddp *dd = NULL;
  char hello[300];
  snprintf(hello, sizeof hello, "name=%s\nversion=%d\n", nm, PROBE_WIRE_VERSION);
  probe_wire_end e = probe_wire_send(fd, PROBE_MSG_HELLO, hello, NULL, 0, cfg->io_timeout_s, &err);
  if (e == PROBE_WIRE_OK) e = probe_wire_recv(fd, 0, cfg->connect_timeout_s, cfg->io_timeout_s, &m, &err);
  if (e != PROBE_WIRE_OK) {
    rc = bsay(nm, e == PROBE_WIRE_PROTOCOL ? HS_EXIT_BADINPUT : 1, "server on port %u: %s", cfg->port, err.msg);
    goto done;
  }
  if (m.type != PROBE_MSG_WELCOME) {
    char why[600] = "";
    probe_kv_get(m.text, "reason", why, sizeof why);
    rc = bsay(nm, HS_EXIT_BADINPUT, "the server refused this board: %s", m.type == PROBE_MSG_ERROR ? why : probe_msg_name(m.type));
    goto done;
  }
  char task[64] = "";
  double seed = 0, batch = 0, parts = 0, index = 0, nparams = 0, mbytes = 0, max_samples = 0, busy_w = NAN;
  hs_status st = probe_kv_get(m.text, "task", task, sizeof task) ? HS_OK
                                                                  : hs_error_set(&err, HS_EMISSING, "task: missing");
  if (st == HS_OK) st = probe_kv_num(m.text, "seed", &seed, &err);
  if (st == HS_OK) st = probe_kv_num(m.text, "batch", &batch, &err);
  if (st == HS_OK) st = probe_kv_num(m.text, "participants", &parts, &err);
  if (st == HS_OK) st = probe_kv_num(m.text, "index", &index, &err);
  if (st == HS_OK) st = probe_kv_num(m.text, "nparams", &nparams, &err);
  if (st == HS_OK) st = probe_kv_num(m.text, "model_bytes", &mbytes, &err);
  if (st == HS_OK) st = probe_kv_num(m.text, "max_samples", &max_samples, &err);
  if (st == HS_OK && !(parts >= 1 && index >= 0 && index < parts && batch >= 1 && mbytes >= 4 * nparams))
    st = hs_error_set(&err, HS_EINVAL, "participants, index, batch or model_bytes out of range");
  char profile[300] = "";
  probe_kv_get(m.text, "profile", profile, sizeof profile);
  if (st == HS_OK && probe_kv_num(m.text, "busy_w", &busy_w, &(hs_error){HS_OK, ""}) != HS_OK) busy_w = NAN;
  probe_msg_fini(&m);
  if (st != HS_OK) {
    rc = bsay(nm, HS_EXIT_BADINPUT, "WELCOME: %s", err.msg);
    goto done;
  }
  hs_learn_cfg lc = {.task = task, .data = cfg->data, .max_samples = (size_t)max_samples, .seed = (uint64_t)seed,
                     .batch = (size_t)batch, .opt = {.kind = HS_LEARN_SGD}, .threads = cfg->threads ? cfg->threads : 1};
  hs_learn_part_cfg pc = {HS_LEARN_IID, (unsigned)parts, 0, NULL};
  if (hs_learn_create(&lc, &l, &err) != HS_OK || hs_learn_partition(l, &pc, &err) != HS_OK) {
    tell(fd, err.msg);
    rc = bsay(nm, err.status == HS_ENOENT || err.status == HS_EIO ? 1 : HS_EXIT_BADINPUT, "%s", err.msg);
    goto done;
  }
  size_t np = hs_learn_nparams(l), mb = (size_t)mbytes;
  if (np != (size_t)nparams) {
    rc = bsay(nm, HS_EXIT_BADINPUT, "the server's %s model has %.0f parameters, this board's %zu", task, nparams, np);
    tell(fd, "the board's model has another parameter count");
    goto done;
  }
  probe_sensor_cfg sc = {cfg->root ? cfg->root : "/", NULL, NULL, 0};
  const char *spec = cfg->sensor ? cfg->sensor : "auto";
  if (probe_sensor_open(spec, &sc, &sensor, &err) != HS_OK) {
    if (strcmp(spec, "auto") != 0) {
      tell(fd, err.msg);
      rc = bsay(nm, HS_EXIT_BADINPUT, "--sensor %s: %s", spec, err.msg);
      goto done;
    }
    sensor.type = NULL; /* auto and nothing found: stated energy */
  }
  char energy[400];
  if (sensor.type) {
    smp = probe_sampler_create(&sensor, sc.root, 20);
    snprintf(energy, sizeof energy, "measured:%s (covers %s)", sensor.type->id(sensor.state),
             sensor.type->covers(sensor.state));
  } else if (!isnan(busy_w)) {
    snprintf(energy, sizeof energy, "stated:busy_w %g W of profile %.150s x train_s (no power sensor)", busy_w, profile);
  } else {
    snprintf(energy, sizeof energy, "none:no power sensor and no profile busy_w (energy_j 0)");
  }
  char ready[600];
  snprintf(ready, sizeof ready, "nparams=%zu\nenergy=%s\n", np, energy);
  if ((e = probe_wire_send(fd, PROBE_MSG_READY, ready, NULL, 0, cfg->io_timeout_s, &err)) != PROBE_WIRE_OK) {
    rc = bsay(nm, 1, "%s", err.msg);
    goto done;
  }
  start = hs_calloc(np, sizeof *start);
  out = hs_calloc(np, sizeof *out);
  wire = hs_calloc(mb, 1);
  for (;;) {
    e = probe_wire_recv(fd, mb, cfg->round_timeout_s, cfg->io_timeout_s, &m, &err);
    double t_dl = probe_now_mono();
    if (e != PROBE_WIRE_OK) {
      rc = bsay(nm, e == PROBE_WIRE_PROTOCOL ? HS_EXIT_BADINPUT : 1, "waiting for a round: %s", err.msg);
      goto done;
    }
    if (m.type == PROBE_MSG_BYE) break;
    if (m.type == PROBE_MSG_ERROR) {
      char why[600] = "";
      probe_kv_get(m.text, "reason", why, sizeof why);
      rc = bsay(nm, 1, "the server stopped the run: %s", why);
      goto done;
    }
    if (m.type == PROBE_MSG_STEP) { /* ddp */
      if (!dd) dd = ddp_create(l, np, mb);
      rc = ddp_step(dd, l, fd, &m, t_dl, (unsigned)index, smp, busy_w, cfg, &err);
      probe_msg_fini(&m);
      if (rc) {
        tell(fd, err.msg);
        bsay(nm, rc, "%s", err.msg);
        goto done;
      }
      continue;
    }
    double round = -1, samples = -1, draw = -1;
    st = m.type == PROBE_MSG_ROUND ? HS_OK
                                   : hs_error_set(&err, HS_EPARSE, "expected ROUND or STEP, got %s", probe_msg_name(m.type));
    if (st == HS_OK) st = probe_kv_num(m.text, "round", &round, &err);
    if (st == HS_OK) st = probe_kv_num(m.text, "samples", &samples, &err);
    if (st == HS_OK && probe_kv_num(m.text, "draw", &draw, &(hs_error){HS_OK, ""}) != HS_OK) draw = round;
    if (st == HS_OK && (m.bin_len != mb || !(samples >= 1)))
      st = hs_error_set(&err, HS_EINVAL, "ROUND: %zu model bytes (expected %zu), %g samples", m.bin_len, mb, samples);
    if (st != HS_OK) {
      tell(fd, err.msg);
      rc = bsay(nm, HS_EXIT_BADINPUT, "%s", err.msg);
      goto done;
    }
    memcpy(start, m.bin, np * sizeof(float));
    probe_msg_fini(&m);
    hs_learn_job job = {.participant = (unsigned)index, .draw = (uint64_t)draw, .samples = (size_t)samples,
                        .start = start, .out = out};
    probe_mark m0, m1;
    double t0 = probe_now_mono();
    if (smp) probe_sampler_mark(smp, &m0, &err);
    st = hs_learn_train(l, &job, &err);
    if (smp) probe_sampler_mark(smp, &m1, &err);
    double t1 = probe_now_mono();
    if (st != HS_OK) {
      tell(fd, err.msg);
      rc = bsay(nm, 1, "round %.0f: training: %s", round, err.msg);
      goto done;
    }
    double ej = 0;
    if (smp) {
      if (probe_sampler_energy(smp, &m0, &m1, &ej, &err) != HS_OK || !(ej >= 0)) {
        tell(fd, err.msg);
        rc = bsay(nm, 1, "round %.0f: the power sensor failed: %s", round, err.msg);
        goto done;
      }
    } else if (!isnan(busy_w)) {
      ej = busy_w * (t1 - t0);
    }
    memcpy(wire, out, np * sizeof(float));
    char res[600];
    double ul0 = probe_now_mono();
    snprintf(res, sizeof res,
             "round=%.0f\nsamples=%.0f\ndl_end=%.17g\ntrain0=%.17g\ntrain1=%.17g\nul0=%.17g\nenergy_j=%.17g\nloss=%.17g\n",
             round, samples, t_dl, t0, t1, ul0, ej, job.trained ? job.loss_sum / (double)job.trained : 0.0);
    if ((e = probe_wire_send(fd, PROBE_MSG_RESULT, res, wire, mb, cfg->io_timeout_s, &err)) != PROBE_WIRE_OK) {
      rc = bsay(nm, 1, "round %.0f: %s", round, err.msg);
      goto done;
    }
  }
done:
  ddp_destroy(dd);
  probe_msg_fini(&m);
  if (smp) probe_sampler_destroy(smp);
  probe_sensor_close(&sensor);
  free(start);
  free(out);
  free(wire);
  hs_learn_destroy(l);
  close(fd);
  return rc;
}
