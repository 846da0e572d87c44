/* serve_fedasync.c: the runtime's fedasync regime (serve_regime.h):
 * asynchronous federated training, as the simulator's fedasync
 * (sim/regimes/regime_fedasync.c) simulates it. No barrier: one thread per
 * board loops download (ROUND with the current global model and the board's
 * current allocation), train (the board's k-th update, draw key k, as the
 * simulator's learning draws it), upload (RESULT). The server mixes each
 * arriving model into the global one as it arrives, under one lock:
 *   global = (1 - a) global + a model, a = mixing_alpha x s(staleness)
 * (hs_learn_mix), staleness = the versions merged since the board
 * downloaded, s constant (1), polynomial ((t+1)^-a) or hinge (1 when t <= b,
 * else 1/(a(t-b)+1)): the simulator's keys and defaults (staleness
 * "polynomial", staleness_a 0.5 (10 for hinge), staleness_b 4, mixing_alpha
 * 0.6), its prepare rules (staleness_a does not apply to constant,
 * staleness_b only to hinge).
 *
 * Reporting windows stand in for rounds, as in the simulator: a window closes
 * each time another samples_per_round samples have arrived; the controller
 * is fed the updates that arrived in it (per board: samples, their training
 * time and energy) and its new allocation applies to each board's next
 * download; a board given 0 samples stays idle to the end. The run stops
 * when rounds x samples_per_round samples have arrived; an update in flight
 * then is abandoned (not merged; its row says so, its energy was spent and
 * is counted).
 * Records: updates.csv, telemetry.csv, allocations.csv, server.csv, run.json
 * (devices/probe/README.md). Rows are in arrival order: a real asynchronous
 * run's order is the machine's, not a seed's.
 * Rejected: a merge queue drained by one server thread (the mix of a 0.4 MB
 * model takes about 0.3 ms, so the lock is held briefly, and a queue would
 * add a hop between an arrival and the version the next download sees). */
#include "serve_regime.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const FA_KEYS[] = {"staleness", "staleness_a", "staleness_b", "mixing_alpha", NULL};

typedef enum { STALE_CONSTANT, STALE_POLYNOMIAL, STALE_HINGE } fa_fn;
static const char *const FA_FNS[] = {"constant", "polynomial", "hinge", NULL};

typedef struct fa_opts {
  fa_fn fn;
  double a, b, alpha;
} fa_opts;

static int fa_options(const probe_cscn *s, void *opts) {
  fa_opts *o = opts;
  const char *fn = "polynomial";
  int rc = probe_srv_opt_choice(s, "staleness", FA_FNS, &fn);
  if (rc) return rc;
  o->fn = !strcmp(fn, "constant") ? STALE_CONSTANT : !strcmp(fn, "hinge") ? STALE_HINGE : STALE_POLYNOMIAL;
  bool found = false;
  o->a = o->fn == STALE_HINGE ? 10 : 0.5;
  if ((rc = probe_srv_opt_num(s, "staleness_a", 0, INFINITY, false, &o->a, &found))) return rc;
  if (found && o->fn == STALE_CONSTANT)
    return probe_srv_say(HS_EXIT_BADINPUT, "%s: regime.staleness_a: does not apply to staleness \"constant\"", s->path);
  o->b = 4;
  if ((rc = probe_srv_opt_num(s, "staleness_b", 0, INFINITY, false, &o->b, &found))) return rc;
  if (found && o->fn != STALE_HINGE)
    return probe_srv_say(HS_EXIT_BADINPUT, "%s: regime.staleness_b: applies only to staleness \"hinge\"", s->path);
  o->alpha = 0.6;
  if ((rc = probe_srv_opt_num(s, "mixing_alpha", 0, 1, false, &o->alpha, &found))) return rc;
  if (found && !(o->alpha > 0))
    return probe_srv_say(HS_EXIT_BADINPUT, "%s: regime.mixing_alpha: 0 is not in (0, 1]", s->path);
  return 0;
}

static double stale_weight(const fa_opts *o, double t) {
  switch (o->fn) {
    case STALE_POLYNOMIAL: return pow(t + 1.0, -o->a);
    case STALE_HINGE: return t <= o->b ? 1.0 : 1.0 / (o->a * (t - o->b) + 1.0);
    default: return 1.0;
  }
}

typedef struct fa_update { /* one update, in arrival order */
  size_t board, window;
  uint32_t update, version;
  uint64_t samples;
  double staleness, weight;
  double start_s, download_s, setup_s, train_s, pack_s, upload_s, energy_j, loss;
  bool merged;
} fa_update;

typedef struct fa_window {
  double close_s, controller_s;
  size_t updates;
  bool reallocated;
} fa_window;

typedef struct fa_state {
  probe_srv_run *run;
  const fa_opts *o;
  pthread_mutex_t mu;
  uint32_t version;
  uint64_t arrived, next_boundary;
  size_t windows;            /* closed */
  bool finished, failed;
  int rc;
  double t0, merge_s;
  fa_update *up;
  size_t nup, capup;
  fa_window *win;            /* rounds windows */
  uint64_t *alloc;           /* per window, the allocation in force */
  uint64_t *w_samples;       /* per board, in the open window */
  double *w_s, *w_j;
  double *w_c, *comm;        /* per board: download + upload of the window's merged updates; fed */
  uint64_t *w_n;             /* per board: merged updates in the window */
  hs_telemetry *tel;
  probe_srv_tel tc;
  double staleness_sum, weight_sum;
  uint64_t merged;
} fa_state;

typedef struct fa_board {
  fa_state *fs;
  probe_srv_board *b;
  unsigned char *snap;       /* the model it downloads */
} fa_board;

/* Under the lock: close the windows the arrivals completed. */
static void close_windows(fa_state *fs) {
  probe_srv_run *run = fs->run;
  size_t n = run->n;
  while (fs->arrived >= fs->next_boundary && !fs->finished && !fs->failed) {
    fs->next_boundary += (uint64_t)run->budget;
    size_t w = fs->windows;
    double c0 = probe_now_mono();
    fs->win[w].close_s = c0 - fs->t0;
    for (size_t i = 0; i < n; i++) {
      probe_srv_tel_row(&fs->tc, w, run->b[i].name, fs->w_s[i], fs->w_j[i], fs->w_samples[i],
                        fs->w_n[i] ? fs->w_c[i] / (double)fs->w_n[i] : 0, &fs->tel[i], &fs->comm[i]);
      fs->w_c[i] = 0;
      fs->w_n[i] = 0;
      fs->w_samples[i] = 0;
      fs->w_s[i] = fs->w_j[i] = 0;
    }
    hs_error err = {HS_OK, ""};
    if (hs_controller_set_comm(run->ctl, fs->comm, n, &err) != HS_OK ||
        hs_controller_update(run->ctl, fs->tel, n, &err) != HS_OK) {
      fs->failed = true;
      fs->rc = probe_srv_say(1, "window %zu: controller: %s", w, err.msg);
      return;
    }
    fs->win[w].reallocated = hs_controller_reallocated(run->ctl);
    fs->win[w].controller_s = probe_now_mono() - c0;
    fs->windows++;
    if (fs->windows >= run->rounds) {
      fs->finished = true;
    } else {
      memcpy(fs->alloc + fs->windows * n, hs_controller_allocation(run->ctl), n * sizeof *fs->alloc);
      if (!run->cfg->quiet) {
        printf("window %zu: %.3f s%s\n", w, fs->win[w].close_s, fs->win[w].reallocated ? ", reallocated" : "");
        fflush(stdout);
      }
    }
  }
}

static void *fa_loop(void *arg) {
  fa_board *fb = arg;
  fa_state *fs = fb->fs;
  probe_srv_run *run = fs->run;
  probe_srv_board *b = fb->b;
  size_t i = b->i, n = run->n;
  for (uint32_t k = 0;; k++) {
    pthread_mutex_lock(&fs->mu);
    bool stop = fs->finished || fs->failed;
    uint64_t samples = stop ? 0 : fs->alloc[fs->windows * n + i];
    stop = stop || samples == 0;
    uint32_t version = fs->version;
    if (!stop) memcpy(fb->snap, run->global, run->np * sizeof(float));
    pthread_mutex_unlock(&fs->mu);
    if (stop) return NULL;
    b->round = k;
    b->draw = k;
    b->samples = samples;
    b->model_in = fb->snap;
    b->end = PROBE_WIRE_OK;
    probe_srv_exchange(b);
    pthread_mutex_lock(&fs->mu);
    if (b->end != PROBE_WIRE_OK) {
      if (!fs->failed) {
        fs->failed = true;
        char why[HS_ERROR_MSG_MAX + 200];
        snprintf(why, sizeof why, "window %zu, update %u: board \"%s\": %s%s", fs->windows, k, b->name, b->err.msg,
                 b->end == PROBE_WIRE_CLOSED ? " (did the board die?)" : "");
        fs->rc = probe_srv_say(probe_srv_end_rc(b->end), "%s", why);
      }
      b->fd = b->fd >= 0 ? (close(b->fd), -1) : -1;
      pthread_mutex_unlock(&fs->mu);
      return NULL;
    }
    if (fs->nup == fs->capup) {
      fs->capup = fs->capup ? 2 * fs->capup : 64;
      fs->up = hs_reallocarray(fs->up, fs->capup, sizeof *fs->up);
    }
    fa_update *u = &fs->up[fs->nup++];
    *u = (fa_update){.board = i, .window = fs->windows, .update = k, .version = version, .samples = samples,
                     .start_s = b->t_send0 - fs->t0, .download_s = b->b_dl_end - b->t_send0,
                     .setup_s = b->b_train0 - b->b_dl_end, .train_s = b->b_train1 - b->b_train0,
                     .pack_s = b->b_ul0 - b->b_train1, .upload_s = b->t_recv_end - b->b_ul0,
                     .energy_j = b->energy_j, .loss = b->loss};
    if (!fs->finished && !fs->failed) {
      double a0 = probe_now_mono();
      u->staleness = (double)(fs->version - version);
      u->weight = fs->o->alpha * stale_weight(fs->o, u->staleness);
      hs_learn_mix(run->l, run->global, (const float *)(const void *)b->model_out, u->weight);
      fs->version++;
      fs->merged++;
      fs->staleness_sum += u->staleness;
      fs->weight_sum += u->weight;
      u->merged = true;
      fs->w_samples[i] += samples;
      fs->w_s[i] += u->train_s;
      fs->w_c[i] += u->download_s + u->upload_s;
      fs->w_n[i]++;
      fs->w_j[i] += u->energy_j;
      fs->arrived += samples;
      fs->merge_s += probe_now_mono() - a0;
      close_windows(fs);
    }
    pthread_mutex_unlock(&fs->mu);
  }
}

static int write_records(fa_state *fs, double makespan, double drain_s, double loss, double acc) {
  probe_srv_run *r = fs->run;
  size_t n = r->n;
  char *uc = NULL, *ac = NULL, *sc = NULL, *ex = NULL;
  size_t ul = 0, al = 0, sl = 0, el = 0;
  probe_srv_add(&uc, &ul, "update,device,board_update,window,version,staleness,weight,samples,start_s,download_s,"
                          "setup_s,train_s,pack_s,upload_s,energy_j,energy,loss,merged\n");
  for (size_t k = 0; k < fs->nup; k++) {
    const fa_update *u = &fs->up[k];
    probe_srv_add(&uc, &ul, "%zu,%s,%u,%zu,%u,%.0f,%.6g,%llu,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6g,%s,%.6g,%d\n", k,
                  r->b[u->board].name, u->update, u->window, u->version, u->staleness, u->weight,
                  (unsigned long long)u->samples, u->start_s, u->download_s, u->setup_s, u->train_s, u->pack_s,
                  u->upload_s, u->energy_j, probe_srv_energy_kind(&r->b[u->board], u->samples), u->loss,
                  u->merged ? 1 : 0);
    if (u->window < r->rounds) fs->win[u->window].updates += u->merged;
  }
  probe_srv_add(&ac, &al, "round,device,samples\n");
  for (size_t w = 0; w < r->rounds; w++)
    for (size_t i = 0; i < n; i++)
      probe_srv_add(&ac, &al, "%zu,%s,%llu\n", w, r->b[i].name, (unsigned long long)fs->alloc[w * n + i]);
  probe_srv_add(&sc, &sl, "window,close_s,updates,controller_s,reallocated\n");
  double ctl = 0;
  for (size_t w = 0; w < r->rounds; w++) {
    probe_srv_add(&sc, &sl, "%zu,%.6f,%zu,%.6f,%d\n", w, fs->win[w].close_s, fs->win[w].updates,
                  fs->win[w].controller_s, fs->win[w].reallocated ? 1 : 0);
    ctl += fs->win[w].controller_s;
  }
  double m = (double)fs->merged;
  size_t abandoned = fs->nup - (size_t)fs->merged;
  probe_srv_add(&ex, &el, "  \"updates_merged\": %llu,\n  \"updates_abandoned\": %zu,\n"
                          "  \"mean_staleness_versions\": %.6g,\n  \"mean_mixing_weight\": %.6g,\n"
                          "  \"merge_s_per_update\": %.6g,\n  \"drain_s\": %.6f,\n", (unsigned long long)fs->merged,
                abandoned, m > 0 ? fs->staleness_sum / m : 0, m > 0 ? fs->weight_sum / m : 0, m > 0 ? fs->merge_s / m : 0,
                drain_s);
  /* server_s_per_round: the server's work of a window (merges and the controller);
   * overhead_fraction: that work over the makespan (the server works while boards train) */
  double work = fs->merge_s + ctl;
  char *j = probe_srv_run_json(r, makespan, work / (double)r->rounds, makespan > 0 ? work / makespan : 0, loss, acc,
                               ex);
  int rc = 0;
  if (!rc) rc = probe_srv_write(r->cfg->out, "updates.csv", uc);
  if (!rc) rc = probe_srv_write(r->cfg->out, "telemetry.csv", fs->tc.csv);
  if (!rc) rc = probe_srv_write(r->cfg->out, "allocations.csv", ac);
  if (!rc) rc = probe_srv_write(r->cfg->out, "server.csv", sc);
  if (!rc) rc = probe_srv_write(r->cfg->out, "run.json", j);
  free(uc);
  free(ac);
  free(sc);
  free(ex);
  free(j);
  if (!rc && !r->cfg->quiet)
    printf("%s: %zu windows x %zu boards (fedasync): makespan %.3f s, %llu updates merged, %zu abandoned, mean "
           "staleness %.3g versions; records in %s\n", r->s->name, r->rounds, n, makespan,
           (unsigned long long)fs->merged, abandoned, m > 0 ? fs->staleness_sum / m : 0, r->cfg->out);
  return rc;
}

static int fa_run(probe_srv_run *run) {
  size_t n = run->n;
  fa_state fs = {.run = run, .o = run->opts, .next_boundary = (uint64_t)run->budget};
  pthread_mutex_init(&fs.mu, NULL);
  fs.win = hs_calloc(run->rounds, sizeof *fs.win);
  fs.alloc = hs_calloc(run->rounds * n, sizeof *fs.alloc);
  memcpy(fs.alloc, hs_controller_allocation(run->ctl), n * sizeof *fs.alloc);
  fs.w_samples = hs_calloc(n, sizeof *fs.w_samples);
  fs.w_s = hs_calloc(n, sizeof *fs.w_s);
  fs.w_j = hs_calloc(n, sizeof *fs.w_j);
  fs.w_c = hs_calloc(n, sizeof *fs.w_c);
  fs.comm = hs_calloc(n, sizeof *fs.comm);
  fs.w_n = hs_calloc(n, sizeof *fs.w_n);
  fs.tel = hs_calloc(n, sizeof *fs.tel);
  probe_srv_tel_init(&fs.tc);
  fa_board *fb = hs_calloc(n, sizeof *fb);
  pthread_t *th = hs_calloc(n, sizeof *th);
  bool *started = hs_calloc(n, sizeof *started);
  fs.t0 = probe_now_mono();
  for (size_t i = 0; i < n; i++) {
    fb[i] = (fa_board){.fs = &fs, .b = &run->b[i], .snap = hs_calloc(run->mb, 1)};
    run->b[i].model_out = hs_calloc(run->mb, 1);
    started[i] = pthread_create(&th[i], NULL, fa_loop, &fb[i]) == 0;
    if (!started[i]) {
      pthread_mutex_lock(&fs.mu);
      if (!fs.failed) fs.rc = probe_srv_say(1, "board \"%s\": cannot start a thread", run->b[i].name);
      fs.failed = true;
      pthread_mutex_unlock(&fs.mu);
    }
  }
  for (size_t i = 0; i < n; i++)
    if (started[i]) pthread_join(th[i], NULL);
  /* the run ends when the last window closes (the simulator's end); the wait
   * for the updates then in flight (abandoned) is drain_s */
  double drain_s = probe_now_mono() - fs.t0, makespan = fs.finished ? fs.win[run->rounds - 1].close_s : drain_s;
  drain_s -= makespan;
  int rc = fs.rc;
  if (rc == 0 && !fs.finished) /* every board idle (0 samples) before the budget arrived */
    rc = probe_srv_say(HS_EXIT_BADINPUT, "%s: fedasync: every board was given 0 samples after %zu of %zu windows; "
                                         "the run cannot finish", run->s->path, fs.windows, run->rounds);
  if (rc) {
    probe_srv_release(run->b, n, "the server stopped");
  } else {
    probe_srv_release(run->b, n, NULL);
    double loss = NAN, acc = NAN;
    hs_learn_eval(run->l, run->global, 0, &loss, &acc);
    rc = write_records(&fs, makespan, drain_s, loss, acc);
  }
  for (size_t i = 0; i < n; i++) {
    free(fb[i].snap);
    free(run->b[i].model_out);
    run->b[i].model_out = NULL;
    run->b[i].model_in = NULL;
  }
  free(fb);
  free(th);
  free(started);
  free(fs.up);
  free(fs.win);
  free(fs.alloc);
  free(fs.w_samples);
  free(fs.w_s);
  free(fs.w_j);
  free(fs.w_c);
  free(fs.comm);
  free(fs.w_n);
  free(fs.tel);
  probe_srv_tel_fini(&fs.tc);
  pthread_mutex_destroy(&fs.mu);
  return rc;
}

const probe_srv_regime probe_srv_fedasync = {
    .name = "fedasync",
    .keys = FA_KEYS,
    .caps_refused = HS_POLICY_CAP_SELECTS | HS_POLICY_CAP_STEP_LEVEL,
    .caps_why = "is refused by fedasync, as by the simulator (no participant selection: a board left out would "
                "never rejoin the loop; no step-level sizing: there are no synchronised steps)",
    .opts_size = sizeof(fa_opts),
    .options = fa_options,
    .run = fa_run,
};
