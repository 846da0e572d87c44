/* serve_pma.c: the runtime's pma regime (serve_regime.h): real PMA rounds, as
 * the simulator's PMA regime (sim/regimes/fl/regime_fl_round.c) simulates
 * them. Round after round: send every board the global model and its
 * allocation (one thread per board), wait for every trained model, average
 * them (FedAvg, weights = samples), feed the real controller the measured
 * training times and energies, and record the round. In order:
 *   open -> per board: send ROUND (start_s after open, download_s) -> the
 *   board trains (setup_s, train_s, pack_s) -> RESULT arrives (upload_s) ->
 *   waits for the last arrival (wait_s) -> close -> server work
 *   (aggregation, controller, bookkeeping: server_s) -> next open.
 * Records: rounds.csv, telemetry.csv, allocations.csv, server.csv, run.json
 * (devices/probe/README.md; other code reads them: their format is fixed).
 * Keys: none, as the simulator's pma. */
#include "serve_regime.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The simulator's pma has one option, regime.server (the server's
 * aggregation time and power, sim/regimes/fl/regime_fl_energy.c); topology,
 * k, late, ... are fl's, and serve.c refuses them as the simulator does.
 * The runtime's server is real: its aggregation time is measured (server.csv
 * aggregate_s, server_s), not set, so regime.server is refused by name. */
static const char *const PMA_KEYS[] = {"server", NULL};

static int pma_options(const probe_cscn *s, void *opts) {
  (void)opts;
  for (size_t k = 0; k < s->nregime_keys; k++)
    if (!strcmp(s->regime_keys[k], "server"))
      return probe_srv_say(HS_EXIT_BADINPUT, "%s: regime.server: the simulator's server time; the runtime's "
                           "server is real and its aggregation time is measured (server.csv): remove the key "
                           "for a real run", s->path);
  return 0;
}

typedef struct srv_row { /* one board in one round */
  uint64_t samples;
  double start_s, download_s, setup_s, train_s, pack_s, upload_s, wait_s, energy_j, loss;
} srv_row;

typedef struct srv_round {
  double open, close, next_open, aggregate_s, controller_s;
  bool reallocated;
} srv_round;

static int write_records(const probe_srv_run *r, const srv_row *rows, const srv_round *rr, const probe_srv_tel *tel,
                         double final_loss, double final_acc) {
  size_t n = r->n, rounds = r->rounds;
  const probe_srv_board *b = r->b;
  char *rc = NULL, *ac = NULL, *sc = NULL;
  size_t rl = 0, al = 0, sl = 0;
  probe_srv_add(&rc, &rl, "round,device,samples,start_s,download_s,setup_s,train_s,pack_s,upload_s,wait_s,round_s,"
                          "energy_j,energy,loss\n");
  probe_srv_add(&ac, &al, "round,device,samples\n");
  probe_srv_add(&sc, &sl, "round,round_s,server_s,aggregate_s,controller_s,overhead_s,reallocated\n");
  double makespan = rr[rounds - 1].next_open - rr[0].open, work = 0, over = 0, srv = 0;
  for (size_t k = 0; k < rounds; k++) {
    double crit = 0;
    for (size_t i = 0; i < n; i++) {
      const srv_row *w = &rows[k * n + i];
      double round_s = rr[k].close - rr[k].open;
      probe_srv_add(&rc, &rl, "%zu,%s,%llu,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6g,%s,%.6g\n", k, b[i].name,
                    (unsigned long long)w->samples, w->start_s, w->download_s, w->setup_s, w->train_s, w->pack_s,
                    w->upload_s, w->wait_s, round_s, w->energy_j, probe_srv_energy_kind(&b[i], w->samples), w->loss);
      probe_srv_add(&ac, &al, "%zu,%s,%llu\n", k, b[i].name, (unsigned long long)w->samples);
      double c = w->download_s + w->train_s + w->upload_s;
      if (c > crit) crit = c;
    }
    double full = rr[k].next_open - rr[k].open, server_s = rr[k].next_open - rr[k].close;
    probe_srv_add(&sc, &sl, "%zu,%.6f,%.6f,%.6f,%.6f,%.6f,%d\n", k, rr[k].close - rr[k].open, server_s,
                  rr[k].aggregate_s, rr[k].controller_s, full - crit, rr[k].reallocated ? 1 : 0);
    work += full;
    over += full - crit;
    srv += server_s;
  }
  char *j = probe_srv_run_json(r, makespan, srv / (double)rounds, work > 0 ? over / work : 0, final_loss, final_acc,
                               "");
  int rc_ = 0;
  if (!rc_) rc_ = probe_srv_write(r->cfg->out, "rounds.csv", rc);
  if (!rc_) rc_ = probe_srv_write(r->cfg->out, "telemetry.csv", tel->csv);
  if (!rc_) rc_ = probe_srv_write(r->cfg->out, "allocations.csv", ac);
  if (!rc_) rc_ = probe_srv_write(r->cfg->out, "server.csv", sc);
  if (!rc_) rc_ = probe_srv_write(r->cfg->out, "run.json", j);
  free(rc);
  free(ac);
  free(sc);
  free(j);
  if (!rc_ && !r->cfg->quiet)
    printf("%s: %zu rounds x %zu boards: makespan %.3f s, server work %.3f ms per round, runtime overhead %.3f %% of "
           "a round; records in %s\n",
           r->s->name, rounds, n, makespan, 1e3 * srv / (double)rounds, work > 0 ? 100 * over / work : 0, r->cfg->out);
  return rc_;
}

static int pma_run(probe_srv_run *run) {
  size_t n = run->n, np = run->np, mb = run->mb, rounds = run->rounds;
  probe_srv_board *b = run->b;
  float *global = run->global;
  int rc = 0;
  hs_error err = {HS_OK, ""};
  unsigned char *wire_in = hs_calloc(mb, 1);
  float **models = hs_calloc(n, sizeof *models);
  for (size_t i = 0; i < n; i++) {
    b[i].model_out = hs_calloc(mb, 1);
    models[i] = hs_calloc(np, sizeof(float));
  }
  double *wts = hs_calloc(n, sizeof *wts);
  srv_row *rows = hs_calloc(rounds * n, sizeof *rows);
  srv_round *rr = hs_calloc(rounds, sizeof *rr);
  probe_srv_tel tc;
  probe_srv_tel_init(&tc);
  hs_telemetry *tel = hs_calloc(n, sizeof *tel);
  double *comm = hs_calloc(n, sizeof *comm);
  pthread_t *th = hs_calloc(n, sizeof *th);
  bool *started = hs_calloc(n, sizeof *started);
  for (size_t r = 0; r < rounds && rc == 0; r++) {
    double open = probe_now_mono();
    if (r > 0) rr[r - 1].next_open = open;
    rr[r].open = open;
    memcpy(wire_in, global, np * sizeof(float));
    const uint64_t *alloc = hs_controller_allocation(run->ctl);
    for (size_t i = 0; i < n; i++) {
      b[i].round = (uint32_t)r;
      b[i].draw = r;
      b[i].samples = alloc[i];
      b[i].model_in = wire_in;
      b[i].end = PROBE_WIRE_OK;
      started[i] = alloc[i] > 0 && pthread_create(&th[i], NULL, probe_srv_exchange, &b[i]) == 0;
      if (alloc[i] > 0 && !started[i]) {
        hs_error_set(&b[i].err, HS_ENOMEM, "cannot start a thread");
        b[i].end = PROBE_WIRE_SYSTEM;
      }
    }
    for (size_t i = 0; i < n; i++)
      if (started[i]) pthread_join(th[i], NULL);
    double close_t = probe_now_mono();
    rr[r].close = close_t;
    for (size_t i = 0; i < n && rc == 0; i++)
      if (b[i].end != PROBE_WIRE_OK) {
        char why[HS_ERROR_MSG_MAX + 200];
        snprintf(why, sizeof why, "round %zu: board \"%s\": %s%s", r, b[i].name, b[i].err.msg,
                 b[i].end == PROBE_WIRE_CLOSED ? " (did the board die?)" : "");
        b[i].fd = b[i].fd >= 0 ? (close(b[i].fd), -1) : -1;
        probe_srv_release(b, n, why);
        rc = probe_srv_say(probe_srv_end_rc(b[i].end), "%s", why);
      }
    if (rc) break;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
      srv_row *w = &rows[r * n + i];
      w->samples = b[i].samples;
      if (b[i].samples > 0) {
        w->start_s = b[i].t_send0 - open;
        w->download_s = b[i].b_dl_end - b[i].t_send0;
        w->setup_s = b[i].b_train0 - b[i].b_dl_end;
        w->train_s = b[i].b_train1 - b[i].b_train0;
        w->pack_s = b[i].b_ul0 - b[i].b_train1;
        w->upload_s = b[i].t_recv_end - b[i].b_ul0;
        w->wait_s = close_t - b[i].t_recv_end;
        w->energy_j = b[i].energy_j;
        w->loss = b[i].loss;
        memcpy(models[k], b[i].model_out, np * sizeof(float));
        wts[k++] = (double)b[i].samples;
      }
      probe_srv_tel_row(&tc, r, b[i].name, w->train_s, w->energy_j, w->samples, w->download_s + w->upload_s,
                        &tel[i], &comm[i]);
    }
    double a0 = probe_now_mono();
    if (k > 0) hs_learn_aggregate(run->l, (const float *const *)models, wts, k, global);
    double a1 = probe_now_mono();
    if (hs_controller_set_comm(run->ctl, comm, n, &err) != HS_OK ||
        hs_controller_update(run->ctl, tel, n, &err) != HS_OK) {
      probe_srv_release(b, n, "the controller refused the round's telemetry");
      rc = probe_srv_say(1, "round %zu: controller: %s", r, err.msg);
      break;
    }
    rr[r].reallocated = hs_controller_reallocated(run->ctl);
    double a2 = probe_now_mono();
    rr[r].aggregate_s = a1 - a0;
    rr[r].controller_s = a2 - a1;
    if (!run->cfg->quiet) {
      printf("round %zu: %.3f s%s\n", r, close_t - open, rr[r].reallocated ? ", reallocated" : "");
      fflush(stdout);
    }
  }
  if (rc == 0) {
    rr[rounds - 1].next_open = probe_now_mono();
    probe_srv_release(b, n, NULL);
    double loss = NAN, acc = NAN;
    hs_learn_eval(run->l, global, 0, &loss, &acc);
    rc = write_records(run, rows, rr, &tc, loss, acc);
  }
  free(tel);
  free(th);
  free(started);
  for (size_t i = 0; i < n; i++) {
    free(b[i].model_out);
    b[i].model_out = NULL;
    free(models[i]);
  }
  free(models);
  free(wts);
  free(comm);
  free(rows);
  free(rr);
  free(wire_in);
  probe_srv_tel_fini(&tc);
  return rc;
}

const probe_srv_regime probe_srv_pma = {
    .name = "pma",
    .keys = PMA_KEYS,
    .caps_refused = HS_POLICY_CAP_STEP_LEVEL,
    .caps_why = "sizes DDP steps; a pma run takes a round-level policy",
    .options = pma_options,
    .run = pma_run,
};
