/* serve_ddp.c: the runtime's ddp regime (serve_regime.h): step-synchronous
 * data parallel training, as the simulator's ddp (sim/regimes/regime_ddp.c)
 * simulates it. A round is S optimiser steps (regime.steps_per_round, the
 * simulator's default max(1, floor(samples_per_round / (batch_size x
 * boards)))); the controller's n_i of the round is spread over the steps by
 * the simulator's own schedule (hs_ddp_schedule: sum_s b_is = n_i). In step s
 * every board trains its batch b_is with the real trainer, i.e. computes the
 * mean gradient of its b_is samples at its model replica, and the gradients
 * are all-reduced: the step ends when every board has the reduced gradient.
 *
 * The all-reduce is a reduce + broadcast through the server, the simulator's
 * "star" collective (sim/kernel/collective.c: 2(a + max(p 8n/b_server,
 * 8n/b)): every board uploads n = model_bytes of gradient (float32,
 * zero-padded) over its link, the server sums them with the schedule's
 * weights b_is / sum_j b_js (hs_ddp_grad_weights; in double, in board order,
 * rounded once to float32) and every board downloads the n-byte result. So
 * the runtime honours regime.collective "star" only; "ring" and "tree" (and
 * no collective at all, which the simulator reads as ring) are refused with
 * one line. The broadcast of step s travels with the next STEP message (the
 * last one with a final STEP), and each board applies it with its own
 * optimiser state (hs_learn_opt_apply) before it trains: every replica makes
 * the same update. The server keeps a replica too and checks every board's
 * hash (FNV-1a of its parameters) against its own at every step: a replica
 * that differs ends the run (exit 1), so a run that went through had
 * identical models everywhere (steps.csv records the hashes). The update is
 * the dense optimiser step (hs_learn_opt_apply); for the runtime's plain SGD
 * it is what the simulator's hs_learn_step does, also for a model with
 * sparse embedding rows (their zero gradient leaves them as they are).
 *
 * The controller is fed per round what the simulator's ddp telemetry
 * reports: each board's samples n_i, the sum of its steps' gradient times
 * (train_s) and their energy. A step-level policy (ema-batch) sizes every
 * step instead, as in the simulator: the step's batches are
 * hs_controller_step_batches, and after the step the controller is fed the
 * boards' gradient times (hs_controller_step_update); a round's n_i is then
 * the sum of its steps' batches.
 * Records: steps.csv, telemetry.csv, allocations.csv, server.csv, run.json
 * (devices/probe/README.md).
 * Rejected: a ring between the boards (the simulator's default collective):
 * it needs board-to-board connections, a port and a tc class per pair for the
 * box to shape, and 2(p-1) exchanges per step whose latencies loopback cannot
 * show; the star uses the links the box already shapes per board. Sending
 * the gradient as double (exact, but 2 x model_bytes on the wire: the cost
 * model's n would no longer be model_bytes). The server averaging models
 * instead of gradients (that is local SGD, not DDP). */
#include "serve_regime.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const DDP_KEYS[] = {"steps_per_round", "collective", NULL};

typedef struct ddp_opts {
  uint32_t steps;
} ddp_opts;

static void ddp_policy_cfg(const void *opts, hs_policy_config *pc) {
  pc->steps_per_round = ((const ddp_opts *)opts)->steps;
}

static int ddp_options(const probe_cscn *s, void *opts) {
  ddp_opts *o = opts;
  static const char *const collectives[] = {"ring", "tree", "star", NULL};
  const char *coll = NULL;
  int rc = probe_srv_opt_choice(s, "collective", collectives, &coll);
  if (rc) return rc;
  if (!coll || strcmp(coll, "star") != 0)
    return probe_srv_say(HS_EXIT_BADINPUT, "%s: regime.collective: %s%s%s: the runtime all-reduces through the server "
                                           "(the simulator's \"star\"); set \"collective\": \"star\"", s->path,
                         coll ? "\"" : "absent (the simulator then runs a ring)", coll ? coll : "", coll ? "\"" : "");
  double def = floor(s->samples_per_round / (s->batch_size * (double)(s->ndev ? s->ndev : 1)));
  double steps = def < 1 ? 1 : def > 1e7 ? 1e7 : def;
  if ((rc = probe_srv_opt_num(s, "steps_per_round", 1, 1e7, true, &steps, NULL))) return rc;
  o->steps = (uint32_t)steps;
  return 0;
}

/* One board's step in flight: STEP out, GRAD back. */
typedef struct ddp_board {
  probe_srv_board *b;
  uint32_t step;
  bool final;
  size_t in_len;      /* the reduced gradient's bytes in b->model_in (0: none) */
  uint64_t hash;      /* the board's replica before this step's training */
} ddp_board;

static void *ddp_exchange(void *arg) {
  ddp_board *d = arg;
  probe_srv_board *b = d->b;
  char text[160];
  snprintf(text, sizeof text, "round=%u\nstep=%u\nsamples=%llu\nfinal=%d\n", b->round, d->step,
           (unsigned long long)b->samples, d->final ? 1 : 0);
  b->t_send0 = probe_now_mono();
  b->end = probe_wire_send(b->fd, PROBE_MSG_STEP, text, d->in_len ? b->model_in : NULL, d->in_len, b->io_timeout_s,
                           &b->err);
  if (b->end != PROBE_WIRE_OK) return NULL;
  probe_msg m;
  b->end = probe_wire_recv(b->fd, b->model_bytes, b->round_timeout_s, b->io_timeout_s, &m, &b->err);
  b->t_recv_end = probe_now_mono();
  if (b->end != PROBE_WIRE_OK) return NULL;
  size_t want = d->final ? 0 : b->model_bytes;
  if (m.type == PROBE_MSG_ERROR) {
    char why[512] = "";
    probe_kv_get(m.text, "reason", why, sizeof why);
    hs_error_set(&b->err, HS_EIO, "the board failed: %s", why);
    b->end = PROBE_WIRE_CLOSED;
  } else if (m.type != PROBE_MSG_GRAD || m.bin_len != want) {
    hs_error_set(&b->err, HS_EPARSE, "expected a GRAD with %zu gradient bytes, got %s with %zu", want,
                 probe_msg_name(m.type), m.bin_len);
    b->end = PROBE_WIRE_PROTOCOL;
  } else {
    double r = -1, st_ = -1, n = -1;
    char hash[40] = "";
    hs_status st = probe_kv_num(m.text, "round", &r, &b->err);
    if (st == HS_OK) st = probe_kv_num(m.text, "step", &st_, &b->err);
    if (st == HS_OK) st = probe_kv_num(m.text, "samples", &n, &b->err);
    if (st == HS_OK) st = probe_srv_read_stamps(m.text, b);
    char *end = NULL;
    if (st == HS_OK && (!probe_kv_get(m.text, "hash", hash, sizeof hash) || strlen(hash) != 16))
      st = hs_error_set(&b->err, HS_EPARSE, "hash: missing or not 16 hex digits");
    if (st == HS_OK) {
      d->hash = strtoull(hash, &end, 16);
      if (!end || *end) st = hs_error_set(&b->err, HS_EPARSE, "hash: \"%s\" is not hex", hash);
    }
    if (st == HS_OK && (r != b->round || st_ != d->step || n != (double)b->samples))
      st = hs_error_set(&b->err, HS_EINVAL, "GRAD for round %g step %g with %g samples, expected round %u step %u "
                                            "with %llu", r, st_, n, b->round, d->step, (unsigned long long)b->samples);
    if (st == HS_OK && !(b->t_send0 <= b->b_dl_end && b->b_dl_end <= b->b_train0 && b->b_train0 <= b->b_train1 &&
                         b->b_train1 <= b->b_ul0 && b->b_ul0 <= b->t_recv_end && b->energy_j >= 0))
      st = hs_error_set(&b->err, HS_EINVAL, "GRAD's instants are not in order on this machine's monotonic clock");
    if (st != HS_OK) {
      hs_error_prefix(&b->err, "GRAD");
      b->end = PROBE_WIRE_PROTOCOL;
    } else if (want) {
      memcpy(b->model_out, m.bin, want);
    }
  }
  probe_msg_fini(&m);
  return NULL;
}

typedef struct ddp_row { /* one board in one step */
  uint64_t samples, hash;
  double start_s, download_s, setup_s, train_s, pack_s, upload_s, wait_s, energy_j, loss;
} ddp_row;

typedef struct ddp_stepr { /* one step at the server */
  double open, close, next_open, reduce_s, controller_s;
  bool reallocated;
} ddp_stepr;

/* Every board in parallel: one STEP -> GRAD each. 0 or the exit status after
 * one line naming the round, the step and the board. */
static int step_all(probe_srv_run *run, ddp_board *d, pthread_t *th, bool *started, size_t r, uint32_t st) {
  size_t n = run->n;
  for (size_t i = 0; i < n; i++) {
    d[i].b->end = PROBE_WIRE_OK;
    started[i] = pthread_create(&th[i], NULL, ddp_exchange, &d[i]) == 0;
    if (!started[i]) {
      hs_error_set(&d[i].b->err, HS_ENOMEM, "cannot start a thread");
      d[i].b->end = PROBE_WIRE_SYSTEM;
    }
  }
  for (size_t i = 0; i < n; i++)
    if (started[i]) pthread_join(th[i], NULL);
  for (size_t i = 0; i < n; i++) {
    probe_srv_board *b = d[i].b;
    if (b->end == PROBE_WIRE_OK) continue;
    char why[HS_ERROR_MSG_MAX + 200];
    snprintf(why, sizeof why, "round %zu step %u%s: board \"%s\": %s%s", r, st, d[i].final ? " (final)" : "", b->name,
             b->err.msg, b->end == PROBE_WIRE_CLOSED ? " (did the board die?)" : "");
    b->fd = b->fd >= 0 ? (close(b->fd), -1) : -1;
    probe_srv_release(run->b, n, why);
    return probe_srv_say(probe_srv_end_rc(b->end), "%s", why);
  }
  return 0;
}

/* The replicas' hashes against the server's. */
static int check_hashes(probe_srv_run *run, const ddp_board *d, uint64_t mine, size_t r, uint32_t st) {
  for (size_t i = 0; i < run->n; i++)
    if (d[i].hash != mine) {
      char why[400];
      snprintf(why, sizeof why, "round %zu step %u: board \"%s\"'s model (hash %016llx) differs from the server's "
                                "replica (%016llx): the replicas diverged", r, st, d[i].b->name,
               (unsigned long long)d[i].hash, (unsigned long long)mine);
      probe_srv_release(run->b, run->n, why);
      return probe_srv_say(1, "%s", why);
    }
  return 0;
}

static int write_records(const probe_srv_run *r, uint32_t S, const ddp_row *rows, const ddp_stepr *sr,
                         const uint64_t *alloc, const probe_srv_tel *tel, uint64_t final_hash, double loss, double acc) {
  size_t n = r->n, rounds = r->rounds, steps = rounds * S;
  const probe_srv_board *b = r->b;
  char *rc = NULL, *ac = NULL, *sc = NULL, *ex = NULL;
  size_t rl = 0, al = 0, sl = 0, el = 0;
  probe_srv_add(&rc, &rl, "round,step,device,samples,start_s,download_s,setup_s,train_s,pack_s,upload_s,wait_s,"
                          "step_s,energy_j,energy,loss,model_hash\n");
  probe_srv_add(&ac, &al, "round,device,samples\n");
  probe_srv_add(&sc, &sl, "round,step,step_s,server_s,reduce_s,controller_s,overhead_s,reallocated\n");
  double makespan = sr[steps - 1].next_open - sr[0].open, work = 0, over = 0, srv = 0;
  for (size_t k = 0; k < steps; k++) {
    double crit = 0, step_s = sr[k].close - sr[k].open;
    for (size_t i = 0; i < n; i++) {
      const ddp_row *w = &rows[k * n + i];
      probe_srv_add(&rc, &rl, "%zu,%zu,%s,%llu,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6g,%s,%.6g,%016llx\n", k / S,
                    k % S, b[i].name, (unsigned long long)w->samples, w->start_s, w->download_s, w->setup_s,
                    w->train_s, w->pack_s, w->upload_s, w->wait_s, step_s, w->energy_j,
                    probe_srv_energy_kind(&b[i], w->samples), w->loss, (unsigned long long)w->hash);
      double c = w->download_s + w->train_s + w->upload_s;
      if (c > crit) crit = c;
    }
    double full = sr[k].next_open - sr[k].open, server_s = sr[k].next_open - sr[k].close;
    probe_srv_add(&sc, &sl, "%zu,%zu,%.6f,%.6f,%.6f,%.6f,%.6f,%d\n", k / S, k % S, step_s, server_s, sr[k].reduce_s,
                  sr[k].controller_s, full - crit, sr[k].reallocated ? 1 : 0);
    work += full;
    over += full - crit;
    srv += server_s;
  }
  for (size_t k = 0; k < rounds; k++)
    for (size_t i = 0; i < n; i++)
      probe_srv_add(&ac, &al, "%zu,%s,%llu\n", k, b[i].name, (unsigned long long)alloc[k * n + i]);
  probe_srv_add(&ex, &el, "  \"steps_per_round\": %u,\n  \"collective\": \"star: reduce and broadcast through the "
                          "server\",\n  \"server_s_per_step\": %.6f,\n  \"models_identical\": true,\n"
                          "  \"final_model_hash\": \"%016llx\",\n", S, srv / (double)steps,
                (unsigned long long)final_hash);
  /* server_s_per_round: the server's work of a round's S steps */
  char *j = probe_srv_run_json(r, makespan, srv / (double)rounds, work > 0 ? over / work : 0, loss, acc, ex);
  int rc_ = 0;
  if (!rc_) rc_ = probe_srv_write(r->cfg->out, "steps.csv", rc);
  if (!rc_) rc_ = probe_srv_write(r->cfg->out, "telemetry.csv", tel->csv);
  if (!rc_) rc_ = probe_srv_write(r->cfg->out, "allocations.csv", ac);
  if (!rc_) rc_ = probe_srv_write(r->cfg->out, "server.csv", sc);
  if (!rc_) rc_ = probe_srv_write(r->cfg->out, "run.json", j);
  free(rc);
  free(ac);
  free(sc);
  free(ex);
  free(j);
  if (!rc_ && !r->cfg->quiet)
    printf("%s: %zu rounds x %u steps x %zu boards (ddp, star all-reduce): makespan %.3f s, server work %.3f ms per "
           "step, runtime overhead %.3f %%; replicas identical; records in %s\n",
           r->s->name, rounds, S, n, makespan, 1e3 * srv / (double)steps, work > 0 ? 100 * over / work : 0,
           r->cfg->out);
  return rc_;
}

static int ddp_run(probe_srv_run *run) {
  const ddp_opts *o = run->opts;
  uint32_t S = o->steps;
  size_t n = run->n, np = run->np, mb = run->mb, rounds = run->rounds, steps = rounds * S;
  probe_srv_board *b = run->b;
  float *global = run->global;
  int rc = 0;
  hs_error err = {HS_OK, ""};
  unsigned char *reduced = hs_calloc(mb, 1);
  size_t reduced_len = 0; /* 0 before the first step, and after a step without samples */
  double *sum = hs_calloc(np, sizeof *sum), *g64 = hs_calloc(np, sizeof *g64);
  hs_learn_optstate *opt = hs_learn_optstate_for(run->l);
  ddp_board *d = hs_calloc(n, sizeof *d);
  for (size_t i = 0; i < n; i++) {
    d[i].b = &b[i];
    b[i].model_out = hs_calloc(mb, 1);
    b[i].model_in = reduced;
  }
  uint64_t *batch = hs_calloc(n * S, sizeof *batch), *nround = hs_calloc(n, sizeof *nround);
  uint64_t *alloc_rec = hs_calloc(rounds * n, sizeof *alloc_rec);
  double *w = hs_calloc(n, sizeof *w), *tsum = hs_calloc(n, sizeof *tsum), *jsum = hs_calloc(n, sizeof *jsum);
  double *csum = hs_calloc(n, sizeof *csum), *comm = hs_calloc(n, sizeof *comm); /* download + upload */
  ddp_row *rows = hs_calloc(steps * n, sizeof *rows);
  ddp_stepr *sr = hs_calloc(steps, sizeof *sr);
  probe_srv_tel tc;
  probe_srv_tel_init(&tc);
  hs_telemetry *tel = hs_calloc(n, sizeof *tel);
  pthread_t *th = hs_calloc(n, sizeof *th);
  bool *started = hs_calloc(n, sizeof *started);
  bool ema = (hs_policy_caps(run->s->policy_kind) & HS_POLICY_CAP_STEP_LEVEL) != 0;
  for (size_t r = 0; r < rounds && rc == 0; r++) {
    if (!ema) {
      memcpy(nround, hs_controller_allocation(run->ctl), n * sizeof *nround);
      hs_ddp_schedule(nround, n, S, batch);
    }
    memset(tsum, 0, n * sizeof *tsum);
    memset(jsum, 0, n * sizeof *jsum);
    memset(csum, 0, n * sizeof *csum);
    for (uint32_t st = 0; st < S && rc == 0; st++) {
      size_t k = r * S + st;
      double open = probe_now_mono();
      if (k > 0) sr[k - 1].next_open = open;
      sr[k].open = open;
      uint64_t mine = probe_model_hash(global, np * sizeof(float));
      if (ema) { /* the step-level policy sizes this step */
        const uint64_t *bb = hs_controller_step_batches(run->ctl);
        for (size_t i = 0; i < n; i++) batch[i * S + st] = bb[i];
      }
      for (size_t i = 0; i < n; i++) {
        b[i].round = (uint32_t)r;
        b[i].samples = batch[i * S + st];
        d[i].step = st;
        d[i].final = false;
        d[i].in_len = reduced_len;
      }
      if ((rc = step_all(run, d, th, started, r, st))) break;
      double close_t = probe_now_mono();
      sr[k].close = close_t;
      if ((rc = check_hashes(run, d, mine, r, st))) break;
      /* the reduce: the schedule's weights, in board order, in double */
      double a0 = probe_now_mono();
      uint64_t total = 0;
      for (size_t i = 0; i < n; i++) total += batch[i * S + st];
      reduced_len = 0;
      if (total > 0) {
        memset(sum, 0, np * sizeof *sum);
        for (size_t i = 0; i < n; i++) {
          uint64_t bi = batch[i * S + st];
          if (!bi) continue;
          double wi = (double)bi / (double)total;
          const float *g = (const float *)(const void *)b[i].model_out;
          for (size_t j = 0; j < np; j++) sum[j] += wi * (double)g[j];
        }
        float *out = (float *)(void *)reduced;
        for (size_t j = 0; j < np; j++) {
          out[j] = (float)sum[j];
          g64[j] = out[j];
        }
        hs_learn_opt_apply(opt, global, g64, np); /* the server's replica, as every board's */
        reduced_len = mb;
      }
      sr[k].reduce_s = probe_now_mono() - a0;
      for (size_t i = 0; i < n; i++) {
        ddp_row *x = &rows[k * n + i];
        x->samples = b[i].samples;
        x->hash = d[i].hash;
        x->start_s = b[i].t_send0 - open;
        x->download_s = b[i].b_dl_end - b[i].t_send0;
        x->setup_s = b[i].b_train0 - b[i].b_dl_end;
        x->train_s = b[i].b_train1 - b[i].b_train0;
        x->pack_s = b[i].b_ul0 - b[i].b_train1;
        x->upload_s = b[i].t_recv_end - b[i].b_ul0;
        x->wait_s = close_t - b[i].t_recv_end;
        x->energy_j = b[i].energy_j;
        x->loss = b[i].loss;
        if (x->samples) {
          tsum[i] += x->train_s;
          jsum[i] += x->energy_j;
          csum[i] += x->download_s + x->upload_s;
        }
      }
      if (ema) { /* the step's gradient times to the step-level policy */
        double c0 = probe_now_mono();
        for (size_t i = 0; i < n; i++) {
          double t = rows[k * n + i].train_s;
          w[i] = b[i].samples ? (t > 0 ? t : 1e-9) : 0;
        }
        if (hs_controller_step_update(run->ctl, w, n, &err) != HS_OK) {
          probe_srv_release(b, n, "the controller refused the step's times");
          rc = probe_srv_say(1, "round %zu step %u: controller: %s", r, st, err.msg);
          break;
        }
        sr[k].controller_s += probe_now_mono() - c0;
      }
      if (st + 1 == S) { /* the round's telemetry, as the simulator's ddp reports it */
        if (ema)
          for (size_t i = 0; i < n; i++) {
            nround[i] = 0;
            for (uint32_t q = 0; q < S; q++) nround[i] += batch[i * S + q];
          }
        memcpy(alloc_rec + r * n, nround, n * sizeof *alloc_rec);
        double c0 = probe_now_mono();
        for (size_t i = 0; i < n; i++)
          probe_srv_tel_row(&tc, r, b[i].name, tsum[i], jsum[i], nround[i], csum[i], &tel[i], &comm[i]);
        if (hs_controller_set_comm(run->ctl, comm, n, &err) != HS_OK ||
            hs_controller_update(run->ctl, tel, n, &err) != HS_OK) {
          probe_srv_release(b, n, "the controller refused the round's telemetry");
          rc = probe_srv_say(1, "round %zu: controller: %s", r, err.msg);
          break;
        }
        sr[k].reallocated = hs_controller_reallocated(run->ctl);
        sr[k].controller_s += probe_now_mono() - c0;
        if (!run->cfg->quiet) {
          printf("round %zu: %u steps, %.3f s%s\n", r, S, probe_now_mono() - sr[r * S].open,
                 sr[k].reallocated ? ", reallocated" : "");
          fflush(stdout);
        }
      }
    }
  }
  uint64_t final_hash = probe_model_hash(global, np * sizeof(float));
  if (rc == 0) { /* the last step's update, and every replica checked once more */
    sr[steps - 1].next_open = probe_now_mono();
    for (size_t i = 0; i < n; i++) {
      b[i].round = (uint32_t)rounds;
      b[i].samples = 0;
      d[i].step = 0;
      d[i].final = true;
      d[i].in_len = reduced_len;
    }
    rc = step_all(run, d, th, started, rounds, 0);
    if (rc == 0) rc = check_hashes(run, d, final_hash, rounds, 0);
  }
  if (rc == 0) {
    probe_srv_release(b, n, NULL);
    double loss = NAN, acc = NAN;
    hs_learn_eval(run->l, global, 0, &loss, &acc);
    rc = write_records(run, S, rows, sr, alloc_rec, &tc, final_hash, loss, acc);
  }
  for (size_t i = 0; i < n; i++) {
    free(b[i].model_out);
    b[i].model_out = NULL;
    b[i].model_in = NULL;
  }
  free(tel);
  free(th);
  free(started);
  free(d);
  free(batch);
  free(nround);
  free(alloc_rec);
  free(w);
  free(tsum);
  free(jsum);
  free(csum);
  free(comm);
  free(rows);
  free(sr);
  free(reduced);
  free(sum);
  free(g64);
  hs_learn_optstate_destroy(opt);
  probe_srv_tel_fini(&tc);
  return rc;
}

const probe_srv_regime probe_srv_ddp = {
    .name = "ddp",
    .keys = DDP_KEYS,
    .caps_refused = HS_POLICY_CAP_SELECTS,
    .caps_why = "selects participants; ddp refuses that, as the simulator (a board with no samples still "
                "all-reduces every step)",
    .opts_size = sizeof(ddp_opts),
    .options = ddp_options,
    .policy_cfg = ddp_policy_cfg,
    .run = ddp_run,
};
